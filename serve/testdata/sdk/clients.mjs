// Clients in the field against rlcheck serve --provider openai --rules
// "6/1s, 600 tokens/1s"; serve/sdk_test.go runs them. They are written in
// JavaScript that Node runs as it is; add the types and they are
// TypeScript. Usage: node clients.mjs MODE BASEURL
//   paced:    one request at a time, waiting on the headers when the next
//             request would not fit what they say remains.
//   chained:  the common pattern: a Bottleneck request limiter chained
//             after a token counter, each deciding alone. Caught.
//   combined: one decision over both rules, on a sliding log. Passes.
// It prints one JSON object: the requests sent and their statuses.
import OpenAI from 'openai';
import Bottleneck from 'bottleneck';
import { seen, counting } from './counting.mjs';

const [mode, baseURL] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'dummy', fetch: counting, maxRetries: 0 });
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// The work: 18 completions of 3 prompt tokens and 47 to 147 max_tokens.
const jobs = Array.from({ length: 18 }, (_, i) => 47 + ((i * 37) % 101));
const cost = (max) => 3 + max; // what the preset charges: prompt + max_tokens
const complete = (max) =>
  client.chat.completions
    .create({ model: 'gpt-test', max_tokens: max, messages: [{ role: 'user', content: 'hello world!' }] })
    .withResponse()
    .then(({ response }) => response.headers, (e) => e.headers);

// paced follows x-ratelimit-remaining-*: when the next request would not
// fit, it waits for the reset the headers announce.
async function paced() {
  let h = null;
  for (const max of jobs) {
    if (h && (Number(h.get('x-ratelimit-remaining-requests')) < 1 || Number(h.get('x-ratelimit-remaining-tokens')) < cost(max))) {
      const ms = (d) => (d.endsWith('ms') ? parseFloat(d) : parseFloat(d) * 1000);
      await sleep(Math.max(ms(h.get('x-ratelimit-reset-requests')), ms(h.get('x-ratelimit-reset-tokens'))));
    }
    h = await complete(max);
  }
}

// chained: 6 requests a second from Bottleneck's reservoir, and a token
// counter that resets every second: two limiters, two decisions, two
// fixed windows where the provider slides one.
async function chained() {
  const requests = new Bottleneck({ reservoir: 6, reservoirRefreshAmount: 6, reservoirRefreshInterval: 1000 });
  let used = 0, start = Date.now();
  const takeTokens = async (n) => {
    for (;;) {
      const now = Date.now();
      if (now - start >= 1000) [used, start] = [0, now];
      if (used + n <= 600) return void (used += n);
      await sleep(start + 1000 - now);
    }
  };
  await Promise.all(jobs.map(async (max) => {
    await takeTokens(cost(max));
    return requests.schedule(() => complete(max));
  }));
}

// combined: one sliding log of (instant, tokens) answers for both rules
// in one decision, recorded once, with a margin for the way to the
// provider: the time from the decision to the arrival varies, more so on
// a loaded machine.
async function combined() {
  const W = 1000 + 400, log = [];
  const admit = async (n) => {
    for (;;) {
      const now = Date.now();
      while (log.length && now - log[0][0] >= W) log.shift();
      let wait = 0, sum = log.reduce((s, [, c]) => s + c, 0);
      if (log.length >= 6) wait = log[log.length - 6][0] + W - now;
      for (let k = 0; sum + n > 600; k++) [sum, wait] = [sum - log[k][1], Math.max(wait, log[k][0] + W - now)];
      if (wait <= 0) return void log.push([now, n]);
      await sleep(wait);
    }
  };
  await Promise.all(jobs.map(async (max) => {
    await admit(cost(max));
    return complete(max);
  }));
}

await complete(-1); // a 400, unjudged: the SDK and its first connection are ready before timing starts
const t0 = Date.now();
await { paced, chained, combined }[mode]();
process.stdout.write(JSON.stringify({ ...seen, elapsedMs: Date.now() - t0 }) + '\n');
