// The template for your own Node limiter under rlcheck (docs/adapters.md):
//   rlcheck simulate seed --exec 'node adapters/node/my_limiter.mjs'
// Replace MyLimiter with yours; keep build() and the serve() call.

import { Refused, serve } from './rlcheck_adapter.mjs';

// A sliding log per rule, every rule checked and the send recorded in all
// at once, one caller at a time: it keeps every window.
class MyLimiter {
  constructor(rules) {
    this.rules = rules.map((r) => ({ limit: r.limit, windowMs: r.windowMs, log: [] }));
    this.queue = Promise.resolve();
  }

  // Resolves when the call may be sent; callers go first come, first served.
  acquire() {
    const turn = this.queue.then(() => this.waitForRoom());
    this.queue = turn;
    return turn;
  }

  async waitForRoom() {
    for (;;) {
      const now = performance.now();
      let wait = 0;
      for (const r of this.rules) {
        while (r.log.length && now - r.log[0] >= r.windowMs) r.log.shift();
        if (r.log.length >= r.limit) wait = Math.max(wait, r.log[0] + r.windowMs - now);
      }
      if (wait === 0) {
        for (const r of this.rules) r.log.push(now);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

// build makes a fresh limiter for each run; the function it returns
// handles one call: await your limiter, then send() as the request leaves.
function build(run) {
  if (run.rules.some((r) => r.unit !== '')) throw new Error('MyLimiter counts calls only');
  const limiter = new MyLimiter(run.rules);
  return async (call, send) => {
    if (run.rules.some((r) => r.limit < 1)) throw new Refused('a rule admits nothing');
    await limiter.acquire();
    send();
  };
}

await serve({ 'my-sliding-log': build });
