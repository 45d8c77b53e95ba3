"""A client that keeps several rate limits, built from the guide's own code.

SlidingLog, MultiLimit (check every rule, record once) and sequential (one
limiter per rule, acquired one after another) are the guide's asyncio code,
returning the instant they admitted the call; only the windows are scaled
down so that a run takes under a second. Calls
go out over asyncio's own streams (the standard library only), and the
instant each is sent is logged (decimal seconds to the ns, on the
monotonic clock the limiter uses, one a line): the client's own log, which
`rlcheck check` reads.

usage: client.py URL sequential|combined RULES CALLS LOG
  RULES is LIMIT/SECONDS,... e.g. 5/0.1,12/0.3
"""

import asyncio
import collections
import sys
import time
import urllib.parse


class SlidingLog:
    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self.log: collections.deque[float] = collections.deque()

    def _trim(self, now: float) -> None:
        while self.log and now - self.log[0] >= self.window:
            self.log.popleft()

    def wait_time(self, now: float) -> float:
        self._trim(now)
        if len(self.log) < self.limit:
            return 0.0
        return self.log[0] + self.window - now

    def record(self, now: float) -> None:
        self.log.append(now)


class MultiLimit:
    def __init__(self, *limits: SlidingLog) -> None:
        self.limits = limits
        self._lock = asyncio.Lock()

    async def acquire(self) -> float:
        async with self._lock:
            while True:
                now = time.monotonic()
                wait = max(l.wait_time(now) for l in self.limits)
                if wait <= 0:
                    for l in self.limits:
                        l.record(now)
                    return now
                await asyncio.sleep(wait)


async def sequential(limits):
    for limit in limits:
        while (w := limit.wait_time(time.monotonic())) > 0:
            await asyncio.sleep(w)
        now = time.monotonic()
        limit.record(now)
    return now


async def call(url: urllib.parse.SplitResult, admitted) -> int:
    # The connection is opened first, so that the call goes out the
    # moment every rule has admitted it, in the same task: handing it to a
    # thread instead (run_in_executor) delays each send by a varying
    # amount, and a limiter without a margin then overfills windows at its
    # own send instants.
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    # The send instant is the one the limiter admitted the call at: it is
    # sent from here at once, a few microseconds on.
    sent.append(round(await admitted() * 1e9))
    writer.write(f"GET {url.path or '/'} HTTP/1.1\r\nHost: {url.netloc}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            await reader.readexactly(int(value))
    writer.close()
    await writer.wait_closed()
    return status


sent: list[int] = []


async def main() -> None:
    url = urllib.parse.urlsplit(sys.argv[1])
    design, calls, log = sys.argv[2], int(sys.argv[4]), sys.argv[5]
    rules = [r.split("/") for r in sys.argv[3].split(",")]
    limits = [SlidingLog(int(n), float(w)) for n, w in rules]
    multi = MultiLimit(*limits)

    async def admitted() -> float:
        if design == "sequential":
            return await sequential(limits)
        return await multi.acquire()

    statuses = await asyncio.gather(*(call(url, admitted) for _ in range(calls)))
    with open(log, "w") as f:
        f.writelines(f"{t // 10**9}.{t % 10**9:09d}\n" for t in sorted(sent))
    print(" ".join(str(s) for s in statuses))


asyncio.run(main())
