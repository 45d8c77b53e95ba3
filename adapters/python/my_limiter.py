"""A template: put your own asyncio limiter through rlcheck.

Replace TokenBucket with your limiter (import it from your code base); keep
the strategy function and the serve() call. Then:

    rlcheck simulate scenarios/seed.yaml --runs 1000 \
        --exec 'python3 adapters/python/my_limiter.py'
"""

import asyncio
import time

import rlcheck_adapter  # beside this file; or put adapters/python on PYTHONPATH


class TokenBucket:
    """Your limiter: here a token bucket holding `rate` tokens, refilled
    evenly over `per` seconds, taking one token a call."""

    def __init__(self, rate, per):
        self.capacity, self.per = rate, per
        self.tokens, self.stamp = float(rate), time.monotonic()
        self.lock = asyncio.Lock()

    async def acquire(self):
        async with self.lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.capacity / self.per)
                self.stamp = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) * self.per / self.capacity)


def token_buckets(run):
    """Builds a fresh limiter for one run of rlcheck's scenario: one bucket
    per rule, taken one after another, as a user might chain them."""
    buckets = [TokenBucket(r.limit, r.window) for r in run.rules]

    async def call(c, send):
        for b in buckets:
            await b.acquire()
        send()  # the instant the request leaves
        await asyncio.sleep(c.duration)  # in flight; nothing to release here

    return call


if __name__ == "__main__":
    rlcheck_adapter.serve({"my-token-buckets": token_buckets})
