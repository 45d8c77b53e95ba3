"""rlcheck's adapter protocol for Python asyncio limiters, standard library only.

serve() speaks the protocol of docs/adapters.md on standard input and output.
Each run executes on a fresh VirtualLoop: an asyncio event loop on virtual
time that jumps to the next timer when nothing is ready, fires each timer
late by the run's drawn lateness, and charges the drawn operation cost after
every task step. loop.time(), time.monotonic(), time.perf_counter() and
time.time() all read that clock during a run, so unmodified asyncio code runs.

A strategy is a function of the run returning an async function of one call
and a send() callback: the limiter admits the call, then calls send() at the
instant the request leaves. Raise Refused to refuse a call at once.
"""

import asyncio
import heapq
import json
import sys
import time
from dataclasses import dataclass

VERSION = 1


class Refused(Exception):
    """Raised by a strategy for a call no wait would admit."""


@dataclass(frozen=True)
class Rule:
    text: str
    limit: int
    window: float  # seconds, as asyncio code counts time
    window_ns: int
    unit: str
    kind: str
    burst: int


@dataclass(frozen=True)
class Call:
    id: int
    arrival_ns: int
    worker: int
    costs: tuple
    duration: float  # seconds in flight after the send
    duration_ns: int


class _Cycle:
    """The drawn values of one distribution, in order, again from the start."""

    def __init__(self, draws):
        self.draws, self.i = draws or [0], 0

    def next(self):
        v = self.draws[self.i]
        self.i = (self.i + 1) % len(self.draws)
        return v


class _Selector:
    """Stands in for the OS selector: waiting is advancing the virtual clock."""

    def __init__(self, loop):
        self.loop = loop

    def select(self, timeout):
        if timeout is None:
            raise RuntimeError("deadlock: no task is ready and no timer is set")
        if timeout > 0:
            self.loop._wake_at_next_timer()
        return []

    def close(self):
        pass


class VirtualLoop(asyncio.BaseEventLoop):
    """An event loop on virtual time, in integer nanoseconds."""

    def __init__(self, lateness=(), op_cost=()):
        super().__init__()
        self.now_ns = 0
        self._lateness, self._op_cost = _Cycle(list(lateness)), _Cycle(list(op_cost))
        self._selector = _Selector(self)
        self._clock_resolution = 1e-9

    def time(self):
        return self.now_ns / 1e9

    def _wake_at_next_timer(self):
        when = self._scheduled[0].when()  # the earliest timer, in float seconds
        target = max(self.now_ns, int(when * 1e9))
        while target / 1e9 < when:  # never before the timer, whatever the rounding
            target += 1
        self.now_ns = target + self._lateness.next()

    def call_soon(self, callback, *args, context=None):
        return super().call_soon(self._costed, callback, *args, context=context)

    def _costed(self, callback, *args):
        try:
            callback(*args)
        finally:
            self.now_ns += self._op_cost.next()

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass

    def _make_self_pipe(self):
        pass


class _PatchedTime:
    """Points the time module's clocks at the loop during a run."""

    NAMES = ("monotonic", "perf_counter", "time")

    def __init__(self, loop):
        self.loop, self.saved = loop, {}

    def __enter__(self):
        for name in self.NAMES:
            self.saved[name] = getattr(time, name)
            setattr(time, name, self.loop.time)
        time.monotonic_ns = lambda: self.loop.now_ns
        return self

    def __exit__(self, *exc):
        for name, fn in self.saved.items():
            setattr(time, name, fn)
        del time.monotonic_ns


_real_monotonic_ns = time.monotonic_ns


class Run:
    """One run as rlcheck sent it, with seconds beside the nanoseconds."""

    def __init__(self, msg):
        self.msg = msg
        self.id, self.seed, self.strategy = msg["run"], msg["seed"], msg["strategy"]
        self.key, self.margin_ns = msg["key"], msg["margin_ns"]
        self.margin = self.margin_ns / 1e9
        self.workers, self.max_in_flight = msg["workers"], msg["max_in_flight"]
        self.timeout_ns, self.units = msg["timeout_ns"], msg["units"]
        self.rules = [Rule(r["text"], r["limit"], r["window_ns"] / 1e9, r["window_ns"], r["unit"],
                           r["kind"], r["burst"]) for r in msg["rules"]]
        self.calls = [Call(c["id"], c["arrival_ns"], c["worker"], tuple(c["costs"]),
                           c["duration_ns"] / 1e9, c["duration_ns"]) for c in msg["calls"]]


def run_once(run, strategy):
    """Runs strategy over run's calls on a fresh VirtualLoop; returns the answer lines."""
    loop = VirtualLoop(run.msg["lateness"]["draws_ns"], run.msg["op_cost"]["draws_ns"])
    answers = {}
    asyncio.set_event_loop(loop)
    try:
        with _PatchedTime(loop):
            per_call = strategy(run)
            loop.run_until_complete(_all_calls(loop, run, per_call, answers))
    finally:
        _cancel_the_rest(loop)
        asyncio.set_event_loop(None)
        loop.close()
    return [answers[c.id] for c in run.calls]


def _cancel_the_rest(loop):
    """Cancels the tasks a failed run left, so none is destroyed pending."""
    rest = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in rest:
        t.cancel()
    if rest:
        try:
            loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
        except RuntimeError:
            pass


async def _all_calls(loop, run, per_call, answers):
    tasks = []
    for c in run.calls:
        started = loop.create_future()
        loop.call_at(c.arrival_ns / 1e9, started.set_result, None)
        tasks.append(loop.create_task(_one_call(loop, run, c, started, per_call, answers)))
    await asyncio.gather(*tasks)


async def _one_call(loop, run, c, started, per_call, answers):
    await started
    loop.now_ns = max(loop.now_ns, c.arrival_ns)
    sent = []

    def send():
        if not sent:
            sent.append(loop.now_ns)
            answers[c.id] = {"run": run.id, "call": c.id, "send_ns": loop.now_ns}

    try:
        if run.timeout_ns > 0:
            await asyncio.wait_for(per_call(c, send), run.timeout_ns / 1e9)
        else:
            await per_call(c, send)
    except Refused as e:
        answers[c.id] = {"run": run.id, "call": c.id, "refused": str(e) or "refused"}
        return
    except asyncio.TimeoutError:
        if not sent:
            answers[c.id] = {"run": run.id, "call": c.id, "cancelled": True}
        return
    if not sent:
        raise RuntimeError(f"strategy {run.strategy} returned for call {c.id} without send()")


def _line(obj):
    return json.dumps(obj, separators=(",", ":")) + "\n"


def serve(strategies, inp=sys.stdin, out=sys.stdout):
    """Answers rlcheck's runs with strategies, a dict of name to strategy."""
    out.write(_line({"rlcheck_adapter": VERSION, "strategies": list(strategies)}))
    out.flush()
    for line in inp:
        msg = json.loads(line)
        if msg.get("version") != VERSION:
            raise SystemExit(f"rlcheck_adapter: protocol version {msg.get('version')}, not {VERSION}")
        run = Run(msg)
        try:
            lines = run_once(run, strategies[run.strategy])
        except Exception as e:  # the run fails; rlcheck reports it and stops
            out.write(_line({"run": run.id, "error": f"{type(e).__name__}: {e}"}))
            out.flush()
            continue
        out.write("".join(_line(x) for x in lines) + _line({"run": run.id, "done": True}))
        out.flush()
