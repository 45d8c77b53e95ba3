// The Node rate limiters people use for several limits at once, each set up
// the way its documentation suggests for one limit and chained per rule,
// served over rlcheck's adapter protocol on the virtual clock:
//
//   rlcheck simulate seed --exec 'node adapters/node/limiters.mjs'
//
// Arguments, when given, name the strategies to offer (all by default).
//
// None of them keeps the sliding contract "at most N in every window of W"
// that rlcheck judges, except where a strategy's comment says so; the
// report shows by how much each misses it (docs/adapters.md).

import Bottleneck from 'bottleneck';
import { RateLimiter } from 'limiter';
import pThrottle from 'p-throttle';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Refused, serve } from './rlcheck_adapter.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cost a call carries for rule r: 1 for a rule that counts calls. */
export function costOf(run, c, r) {
  return r.unit === '' ? 1 : c.costs[run.units.indexOf(r.unit)];
}

/** Refuses at once a call that costs more than some rule's limit. */
function refuseTooBig(run, c) {
  for (const r of run.rules) {
    if (costOf(run, c, r) > r.limit) throw new Refused(`cost ${costOf(run, c, r)} exceeds ${r.text}`);
  }
}

/** Every rule widened by the run's margin, in milliseconds. */
const windowMs = (run, r) => (r.windowNs + run.marginNs) / 1e6;

// Bottleneck, one limiter per rule with a reservoir of N refilled every W,
// chained: a job launches on the first rule's limiter, then waits on the
// next. Each reservoir refills on its own fixed schedule, and each rule
// spends its capacity before the later rules admit.
function bottleneckReservoirs(run) {
  const limiters = run.rules.map((r) => new Bottleneck({
    reservoir: r.limit, reservoirRefreshAmount: r.limit, reservoirRefreshInterval: windowMs(run, r),
  }));
  for (let i = 0; i + 1 < limiters.length; i++) limiters[i].chain(limiters[i + 1]);
  return (c, send) => {
    refuseTooBig(run, c);
    return limiters[0].schedule({ weight: 1 }, async () => send());
  };
}

// Bottleneck one limiter per rule as its README recommends for a
// reservoir: the reservoir of N refilled every W, with minTime W/N to
// stagger the jobs a refill releases, chained. Callers arriving together
// keep every window; a crowd after an idle spell does not.
function bottleneckPerRule(run) {
  const limiters = run.rules.map((r) => new Bottleneck({
    reservoir: r.limit, reservoirRefreshAmount: r.limit, reservoirRefreshInterval: windowMs(run, r),
    minTime: Math.ceil(windowMs(run, r) / r.limit),
  }));
  for (let i = 0; i + 1 < limiters.length; i++) limiters[i].chain(limiters[i + 1]);
  return (c, send) => {
    refuseTooBig(run, c);
    return limiters[0].schedule(async () => send());
  };
}

// Bottleneck's own answer to several limits: one limiter whose minTime
// spaces launches by the largest W/N, which keeps every rule's sliding
// window (at the cost of never bursting).
function bottleneckMinTime(run) {
  const minTime = Math.max(...run.rules.map((r) => Math.ceil(windowMs(run, r) / r.limit)));
  const limiter = new Bottleneck({ minTime, maxConcurrent: null });
  return (c, send) => {
    refuseTooBig(run, c);
    return limiter.schedule(async () => send());
  };
}

// limiter's RateLimiter (a token bucket of N per W), one per rule, awaited
// one after another.
function limiterChained(run) {
  const buckets = run.rules.map((r) => new RateLimiter({ tokensPerInterval: r.limit, interval: windowMs(run, r) }));
  return async (c, send) => {
    refuseTooBig(run, c);
    for (const [i, r] of run.rules.entries()) await buckets[i].removeTokens(costOf(run, c, r));
    send();
  };
}

// p-throttle, one throttle per rule wrapped around the next; strict is
// its sliding log per rule, still acquired one rule after another.
function pThrottleChained(strict) {
  return (run) => {
    if (run.rules.some((r) => r.unit !== '')) throw new Error('p-throttle counts calls: it has no cost rules');
    let fn = (send) => send();
    for (const r of [...run.rules].reverse()) fn = pThrottle({ limit: r.limit, interval: windowMs(run, r), strict })(fn);
    return (c, send) => fn(send);
  };
}

// rate-limiter-flexible's RateLimiterMemory, "N points per duration", one
// per rule, consumed one after another, sleeping msBeforeNext when full:
// its duration is a fixed window from the first point consumed in it.
function rlfMemoryChained(run) {
  const limiters = run.rules.map((r) => new RateLimiterMemory({ points: r.limit, duration: windowMs(run, r) / 1000 }));
  return async (c, send) => {
    refuseTooBig(run, c);
    for (const [i, r] of run.rules.entries()) await consume(limiters[i], run.key, costOf(run, c, r));
    send();
  };
}

/** Consumes points on limiter, sleeping as long as it says until it admits. */
export async function consume(limiter, key, points) {
  for (;;) {
    try {
      return await limiter.consume(key, points);
    } catch (res) {
      if (res instanceof Error) throw res;
      await sleep(res.msBeforeNext);
    }
  }
}

export const strategies = {
  'node-bottleneck-reservoirs': bottleneckReservoirs,
  'node-bottleneck-per-rule': bottleneckPerRule,
  'node-bottleneck-mintime': bottleneckMinTime,
  'node-limiter': limiterChained,
  'node-p-throttle': pThrottleChained(false),
  'node-p-throttle-strict': pThrottleChained(true),
  'node-rlf-memory': rlfMemoryChained,
};

/** The strategies named (all when none is), or an error naming an unknown one. */
export function pick(names) {
  if (names.length === 0) return strategies;
  const unknown = names.filter((n) => !(n in strategies));
  if (unknown.length) throw new Error(`unknown strategy ${unknown.join(', ')} (known: ${Object.keys(strategies).join(', ')})`);
  return Object.fromEntries(names.map((n) => [n, strategies[n]]));
}

if (import.meta.url === `file://${process.argv[1]}`) await serve(pick(process.argv.slice(2)));
