// rlcheck's adapter protocol for Node limiters, on a virtual clock.
//
// serve() speaks the protocol of docs/adapters.md on standard input and
// output. Each run executes under @sinonjs/fake-timers: setTimeout,
// setInterval, setImmediate and Date read a clock that the driver moves
// to the next timer when no promise is ready, so unmodified limiter code
// runs. The driver keeps the exact instant in integer nanoseconds:
// performance.now() reads it, Date.now() reads its whole milliseconds (as
// Node's own clock does), and a wake-up that had to wait for a timer comes
// late by the run's next drawn lateness; every wake-up then charges the
// next drawn operation cost.
//
// A strategy is a function of the run returning an async function of one
// call and a send() callback: the limiter admits the call, then calls
// send() at the instant the request leaves. Throw Refused to refuse a call
// at once. A strategy marked { realClock: true } runs on the real clock
// instead (a limiter whose state lives in another process, such as Redis).

import FakeTimers from '@sinonjs/fake-timers';
import readline from 'node:readline';

export const VERSION = 1;

/** Thrown by a strategy for a call no wait would admit. */
export class Refused extends Error {}

const realSetImmediate = globalThis.setImmediate;
const realPerformanceNow = performance.now.bind(performance);

/** Cycles through the drawn values of one distribution, in order. */
export class Cycle {
  constructor(draws) {
    this.draws = draws && draws.length ? draws : [0];
    this.i = 0;
  }

  next() {
    const v = this.draws[this.i];
    this.i = (this.i + 1) % this.draws.length;
    return v;
  }
}

/** One run as rlcheck sent it, with seconds and milliseconds beside nanoseconds. */
export class Run {
  constructor(msg) {
    Object.assign(this, {
      msg, id: msg.run, seed: msg.seed, strategy: msg.strategy, key: msg.key,
      marginNs: msg.margin_ns, workers: msg.workers, maxInFlight: msg.max_in_flight,
      timeoutNs: msg.timeout_ns, units: msg.units,
    });
    this.rules = msg.rules.map((r) => ({
      text: r.text, limit: r.limit, windowNs: r.window_ns, windowMs: r.window_ns / 1e6,
      unit: r.unit, kind: r.kind, burst: r.burst,
    }));
    this.calls = msg.calls.map((c) => ({
      id: c.id, arrivalNs: c.arrival_ns, worker: c.worker, costs: c.costs,
      durationNs: c.duration_ns, durationMs: c.duration_ns / 1e6,
    }));
  }
}

/** The virtual clock of one run: fake timers plus the exact instant in ns. */
export class VirtualClock {
  constructor(lateness, opCost) {
    this.nowNs = 0;
    this.lateness = new Cycle(lateness);
    this.opCost = new Cycle(opCost);
    this.fake = FakeTimers.withGlobal(globalThis).install({
      now: 0,
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval',
        'setImmediate', 'clearImmediate', 'Date'],
    });
    performance.now = () => this.nowNs / 1e6;
  }

  uninstall() {
    this.fake.uninstall();
    performance.now = realPerformanceNow;
  }

  /** The earliest pending timer's instant in ns, or Infinity. */
  nextTimerNs() {
    // fake-timers keeps its timers by id in clock.timers (a Map in the
    // pinned version); it has no public call for the next one's instant.
    let first = Infinity;
    for (const t of this.fake.timers?.values() ?? []) first = Math.min(first, t.callAt);
    return first * 1e6;
  }

  /** Moves to atNs without firing a timer (an arrival before every timer). */
  moveTo(atNs) {
    this.nowNs = Math.max(this.nowNs, atNs);
    this.fake.tick(Math.floor(this.nowNs / 1e6) - this.fake.now);
  }

  /** Wakes for the timer at timerNs: late when the loop had to sleep for it. */
  wake(timerNs) {
    if (timerNs > this.nowNs) this.nowNs = timerNs + this.lateness.next();
    this.fake.jump(Math.floor(this.nowNs / 1e6) - this.fake.now);
    this.nowNs += this.opCost.next();
  }
}

const turn = () => new Promise((resolve) => realSetImmediate(resolve));

/** Runs strategy over run's calls on a fresh VirtualClock; returns the answers. */
export async function runOnce(run, strategy) {
  if (strategy.realClock) return runReal(run, strategy);
  const clock = new VirtualClock(run.msg.lateness.draws_ns, run.msg.op_cost.draws_ns);
  try {
    const perCall = await strategy(run);
    const answers = new Map();
    const pending = [...run.calls].sort((a, b) => a.arrivalNs - b.arrivalNs || a.id - b.id);
    const settled = [];
    let failure = null;
    for (;;) {
      await turn();
      if (failure) throw failure;
      if (pending.length === 0 && settled.length === run.calls.length && answers.size === run.calls.length) break;
      const timerNs = clock.nextTimerNs();
      if (pending.length && pending[0].arrivalNs < timerNs) {
        const c = pending.shift();
        clock.moveTo(c.arrivalNs);
        oneCall(run, c, perCall, answers, () => clock.nowNs, clock.fake.setTimeout)
          .then(() => settled.push(c.id), (e) => { failure = e; });
      } else if (timerNs < Infinity) {
        clock.wake(timerNs);
      } else {
        throw new Error(`deadlock: ${run.calls.length - answers.size} calls wait and no timer is set`);
      }
    }
    return run.calls.map((c) => answers.get(c.id));
  } finally {
    clock.uninstall();
  }
}

/** One call: waits on the limiter, records its send, refusal or cancellation. */
async function oneCall(run, c, perCall, answers, nowNs, setTimer) {
  let sent = false;
  const send = () => {
    if (sent || answers.has(c.id)) return;
    sent = true;
    answers.set(c.id, { run: run.id, call: c.id, send_ns: Math.round(nowNs()) });
  };
  try {
    const work = perCall(c, send);
    if (run.timeoutNs > 0) {
      const late = new Promise((resolve) => setTimer(() => resolve('timeout'), run.timeoutNs / 1e6));
      if ((await Promise.race([work, late])) === 'timeout' && !sent) {
        answers.set(c.id, { run: run.id, call: c.id, cancelled: true });
        work.catch(() => {});
        return;
      }
    }
    await work;
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    answers.set(c.id, { run: run.id, call: c.id, refused: e.message || 'refused' });
    return;
  }
  if (!sent) throw new Error(`strategy ${run.strategy} returned for call ${c.id} without send()`);
}

/** A run on the real clock: instants are real nanoseconds since the run's start. */
async function runReal(run, strategy) {
  const perCall = await strategy(run);
  const answers = new Map();
  const start = process.hrtime.bigint();
  const nowNs = () => Number(process.hrtime.bigint() - start);
  const calls = run.calls.map(async (c) => {
    const wait = Math.ceil((c.arrivalNs - nowNs()) / 1e6);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return oneCall(run, c, perCall, answers, nowNs, setTimeout);
  });
  try {
    await Promise.all(calls);
  } finally {
    await strategy.close?.(run);
  }
  return run.calls.map((c) => answers.get(c.id));
}

const line = (obj) => `${JSON.stringify(obj)}\n`;

/** Answers rlcheck's runs with strategies, an object of name to strategy. */
export async function serve(strategies, input = process.stdin, output = process.stdout) {
  output.write(line({ rlcheck_adapter: VERSION, strategies: Object.keys(strategies) }));
  for await (const text of readline.createInterface({ input, crlfDelay: Infinity })) {
    const msg = JSON.parse(text);
    if (msg.version !== VERSION) throw new Error(`rlcheck_adapter: protocol version ${msg.version}, not ${VERSION}`);
    const run = new Run(msg);
    let out;
    try {
      const answers = await runOnce(run, strategies[run.strategy]);
      out = answers.map(line).join('') + line({ run: run.id, done: true });
    } catch (e) {
      out = line({ run: run.id, error: `${e.name}: ${e.message}` });
    }
    output.write(out);
  }
}
