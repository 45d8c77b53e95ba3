"""The guide's multi-limit code, in our own words, as adapter strategies.

SlidingLog keeps one rule as a log of admission instants. sequential takes
the rules one after another, recording in each as it passes (the bug);
combined asks every rule, sleeps the longest wait under one lock, and
records the same instant in all rules once every rule agrees.

    rlcheck simulate scenarios/seed.yaml --exec 'python3 adapters/python/guide.py'
"""

import asyncio
import collections
import time

import rlcheck_adapter


class SlidingLog:
    """At most `limit` admissions in any `window` seconds."""

    def __init__(self, limit, window):
        self.limit, self.window = limit, window
        self.entries = collections.deque()

    def wait(self, now):
        """Seconds until this rule admits a call at `now` (0: at once)."""
        while self.entries and now - self.entries[0] >= self.window:
            self.entries.popleft()
        if len(self.entries) < self.limit:
            return 0.0
        return self.entries[0] + self.window - now

    def record(self, now):
        self.entries.append(now)


class Combined:
    """Check every rule, sleep the longest wait, record once in all."""

    def __init__(self, logs):
        self.logs = logs
        self.lock = asyncio.Lock()

    async def acquire(self):
        async with self.lock:
            while True:
                now = time.monotonic()
                longest = max(log.wait(now) for log in self.logs)
                if longest <= 0:
                    for log in self.logs:
                        log.record(now)
                    return
                await asyncio.sleep(longest)


async def acquire_sequentially(logs):
    """Each rule admits and records before the later rules are asked."""
    for log in logs:
        while (w := log.wait(time.monotonic())) > 0:
            await asyncio.sleep(w)
        log.record(time.monotonic())


def logs_for(run):
    return [SlidingLog(r.limit, r.window + run.margin) for r in run.rules]


def sequential(run):
    logs = logs_for(run)

    async def call(c, send):
        await acquire_sequentially(logs)
        send()

    return call


def combined(run):
    limiter = Combined(logs_for(run))

    async def call(c, send):
        await limiter.acquire()
        send()

    return call


if __name__ == "__main__":
    rlcheck_adapter.serve({"py-sequential": sequential, "py-combined": combined})
