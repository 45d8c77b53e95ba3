// rate-limiter-flexible's RateLimiterRedis, one per rule, consumed one
// after another, against the redis-server at REDIS_URL (default
// redis://127.0.0.1:6379). Redis expires its keys on its own clock, so
// this strategy runs on the real clock: a run takes as long as its
// scenario, and its instants are real nanoseconds since the run began
// (docs/adapters.md).
//
//   REDIS_URL=redis://127.0.0.1:6379 rlcheck simulate s.yaml --exec 'node adapters/node/rlf_redis.mjs'

import Redis from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { consume, costOf } from './limiters.mjs';
import { Refused, serve } from './rlcheck_adapter.mjs';

let client;

function rlfRedisChained(run) {
  client ??= new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', { lazyConnect: false });
  const limiters = run.rules.map((r, i) => new RateLimiterRedis({
    storeClient: client, points: r.limit, duration: (r.windowNs + run.marginNs) / 1e9,
    keyPrefix: `${run.key}:${run.id}:${i}`,
  }));
  return async (c, send) => {
    for (const r of run.rules) {
      if (costOf(run, c, r) > r.limit) throw new Refused(`cost ${costOf(run, c, r)} exceeds ${r.text}`);
    }
    for (const [i, r] of run.rules.entries()) await consume(limiters[i], 'k', costOf(run, c, r));
    send();
  };
}
rlfRedisChained.realClock = true;

await serve({ 'node-rlf-redis': rlfRedisChained });
client?.disconnect();
