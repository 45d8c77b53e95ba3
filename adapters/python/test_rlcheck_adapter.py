"""Tests of the virtual loop, the protocol loop and the guide's strategies.

Run from this folder: python3 -m unittest -v
"""

import asyncio
import io
import json
import random
import time
import unittest

import guide
import rlcheck_adapter as ra


def run_msg(calls, rules=((5, 10**9),), lateness=(0,), op_cost=(0,), timeout_ns=0, run=1, strategy="s"):
    """A run message as rlcheck writes it; calls are arrival instants."""
    return {
        "type": "run", "version": 1, "run": run, "strategy": strategy, "scenario": "t", "seed": 1,
        "key": "k", "rules": [{"text": f"{n}/{w}ns", "limit": n, "window_ns": w, "unit": "", "kind": "sliding",
                               "burst": 0, "offset_ns": 0, "zone": ""} for n, w in rules],
        "boundary": "half-open", "margin_ns": 0, "units": [], "workers": 1, "max_in_flight": 0,
        "timeout_ns": timeout_ns,
        "calls": [{"id": i, "arrival_ns": a, "worker": 0, "costs": [], "duration_ns": 0} for i, a in enumerate(calls)],
        "lateness": {"dist": "", "draws_ns": list(lateness)}, "op_cost": {"dist": "", "draws_ns": list(op_cost)},
    }


def sends(answers):
    return [a["send_ns"] for a in answers]


def sleeper(delay):
    def strategy(run):
        async def call(c, send):
            await asyncio.sleep(delay)
            send()
        return call
    return strategy


class VirtualTime(unittest.TestCase):
    def test_sleep_is_exact_without_lateness(self):
        got = ra.run_once(ra.Run(run_msg([0, 7])), sleeper(1.0))
        self.assertEqual(sends(got), [10**9, 10**9 + 7])

    def test_each_timer_fires_late_by_the_next_draw(self):
        # Both sleepers end at 1 s: one wait for the loop, one lateness.
        got = ra.run_once(ra.Run(run_msg([0, 0], lateness=[300, 5])), sleeper(1.0))
        self.assertEqual(sends(got), [10**9 + 300, 10**9 + 300])

    def test_op_cost_is_charged_after_each_step(self):
        got = ra.run_once(ra.Run(run_msg([0, 0, 0], op_cost=[2])), sleeper(0))
        self.assertEqual(len(set(sends(got))), 3, "steps at one instant drift apart by the op cost")
        self.assertTrue(all(s > 0 for s in sends(got)))

    def test_time_module_reads_the_virtual_clock_during_a_run_only(self):
        seen = []

        def strategy(run):
            async def call(c, send):
                await asyncio.sleep(2.5)
                seen.append((time.monotonic(), time.time(), time.perf_counter(), time.monotonic_ns()))
                send()
            return call

        ra.run_once(ra.Run(run_msg([10**9])), strategy)
        self.assertEqual(seen, [(3.5, 3.5, 3.5, 3500000000)])
        self.assertGreater(abs(time.monotonic() - 3.5), 0, "restored")

    def test_a_wait_on_nothing_is_a_deadlock_not_a_hang(self):
        def strategy(run):
            async def call(c, send):
                await asyncio.get_running_loop().create_future()
            return call

        with self.assertRaisesRegex(RuntimeError, "deadlock"):
            ra.run_once(ra.Run(run_msg([0])), strategy)

    def test_timeout_cancels_and_refusal_refuses(self):
        def strategy(run):
            async def call(c, send):
                if c.id == 0:
                    raise ra.Refused("cost over the limit")
                await asyncio.sleep(5)
                send()
            return call

        got = ra.run_once(ra.Run(run_msg([0, 0], timeout_ns=10**9)), strategy)
        self.assertEqual(got[0]["refused"], "cost over the limit")
        self.assertTrue(got[1]["cancelled"])


class Protocol(unittest.TestCase):
    def exchange(self, *msgs):
        out = io.StringIO()
        ra.serve({"s": sleeper(0.5)}, io.StringIO("".join(json.dumps(m) + "\n" for m in msgs)), out)
        return [json.loads(l) for l in out.getvalue().splitlines()]

    def test_hello_answers_and_done_per_run(self):
        lines = self.exchange(run_msg([0, 1]), run_msg([5], run=2))
        self.assertEqual(lines[0], {"rlcheck_adapter": 1, "strategies": ["s"]})
        self.assertEqual(lines[1:], [
            {"run": 1, "call": 0, "send_ns": 500000000}, {"run": 1, "call": 1, "send_ns": 500000001},
            {"run": 1, "done": True},
            {"run": 2, "call": 0, "send_ns": 500000005}, {"run": 2, "done": True}])

    def test_a_failing_run_is_reported(self):
        out = io.StringIO()
        ra.serve({"s": lambda run: 1 / 0}, io.StringIO(json.dumps(run_msg([0])) + "\n"), out)
        self.assertEqual(json.loads(out.getvalue().splitlines()[1]),
                         {"run": 1, "error": "ZeroDivisionError: division by zero"})

    def test_another_version_is_refused(self):
        msg = run_msg([0])
        msg["version"] = 2
        with self.assertRaises(SystemExit):
            self.exchange(msg)


def violations(times, limit, window_ns):
    """Brute force: a send violates when `limit` earlier sends lie in (t-W, t]."""
    times = sorted(times)
    return sum(1 for i, t in enumerate(times) if sum(1 for u in times[:i] if t - window_ns < u <= t) >= limit)


class Guide(unittest.TestCase):
    rules = ((5, 10**9), (12, 3 * 10**9))

    def seed_run(self, strategy, seed):
        rng = random.Random(seed)
        lateness = [rng.randint(100_000, 3_000_000) for _ in range(300)]
        msg = run_msg([0] * 30, rules=self.rules, lateness=lateness, op_cost=[3000, 6000])
        return sends(ra.run_once(ra.Run(msg), strategy))

    def test_combined_keeps_every_window(self):
        for seed in range(20):
            got = self.seed_run(guide.combined, seed)
            for n, w in self.rules:
                self.assertEqual(violations(got, n, w), 0, f"seed {seed} rule {n}/{w}")

    def test_sequential_overfills_the_per_second_rule(self):
        total = sum(violations(self.seed_run(guide.sequential, seed), 5, 10**9) for seed in range(20))
        self.assertGreater(total, 0)

    def test_without_lateness_both_look_clean(self):
        msg = run_msg([0] * 30, rules=self.rules)
        got = sends(ra.run_once(ra.Run(msg), guide.sequential))
        self.assertEqual(violations(got, 5, 10**9), 0, "a perfect clock hides the bug")

    def test_sliding_log_at_the_window_edge(self):
        log = guide.SlidingLog(2, 1.0)
        log.record(0.0)
        log.record(0.5)
        self.assertEqual(log.wait(0.75), 0.25)
        self.assertEqual(log.wait(1.0), 0.0, "an entry exactly W old has expired")


if __name__ == "__main__":
    unittest.main()
