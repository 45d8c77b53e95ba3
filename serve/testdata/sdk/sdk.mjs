// The official SDKs, with their defaults, against rlcheck serve's presets;
// serve/sdk_test.go runs it. Usage: node sdk.mjs PROVIDER MODE BASEURL [N]
//   parse: one completion, one streamed, then requests without retries
//          until the SDK's own error class reports a 429.
//   burst: N requests at once with the SDK's default retries.
//   probe: waves without retries that pin each rule of sdk_test.go's
//          presets for infer (see probe).
// It prints one JSON object: what the SDK parsed, or what the burst saw.
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { seen, counting } from './counting.mjs';

const [provider, mode, baseURL, n] = process.argv.slice(2);
const header = (h, k) => (typeof h?.get === 'function' ? h.get(k) : h?.[k]) ?? null;
const isAnthropic = provider === 'anthropic';
const prompt = [{ role: 'user', content: 'hello world!' }];

function client(opts) {
  const o = { apiKey: 'dummy', fetch: counting, ...opts };
  if (provider === 'azure-openai') return new AzureOpenAI({ endpoint: baseURL, apiVersion: '2024-10-21', deployment: 'gpt-test', ...o });
  return isAnthropic ? new Anthropic({ baseURL, ...o }) : new OpenAI({ baseURL, ...o });
}

function create(c, extra = {}) {
  if (isAnthropic) return c.messages.create({ model: 'claude-test', max_tokens: 8, messages: prompt, ...extra });
  return c.chat.completions.create({ model: 'gpt-test', max_tokens: 8, messages: prompt, ...extra });
}

async function parse() {
  const c = client({ maxRetries: 0 });
  const out = {};
  const { data, response } = await create(c).withResponse();
  out.usage = data.usage;
  const fam = isAnthropic ? 'anthropic-ratelimit-requests-remaining' : 'x-ratelimit-remaining-requests';
  out.remaining = header(response.headers, fam);
  if (isAnthropic) {
    out.streamUsage = (await c.messages.stream({ model: 'claude-test', max_tokens: 8, messages: prompt }).finalMessage()).usage;
  } else {
    const s = await create(c, { stream: true, stream_options: { include_usage: true } });
    for await (const chunk of s) if (chunk.usage) out.streamUsage = chunk.usage;
  }
  for (let i = 0; i < 100 && !out.error; i++) {
    try {
      await create(c);
    } catch (e) {
      const cls = isAnthropic ? Anthropic.RateLimitError : OpenAI.RateLimitError;
      out.error = { rateLimitError: e instanceof cls, status: e.status, type: e.type ?? e.error?.error?.type ?? null,
        code: e.code ?? null, retryAfter: header(e.headers, 'retry-after'), retryAfterMs: header(e.headers, 'retry-after-ms') };
    }
  }
  return out;
}

async function burst(count) {
  const c = client({});
  const t0 = Date.now();
  const results = await Promise.allSettled(Array.from({ length: count }, () => create(c)));
  const failed = results.filter((r) => r.status === 'rejected');
  return { ...seen, ok: count - failed.length, failed: failed.length, failedStatuses: failed.map((r) => r.reason?.status ?? null),
    elapsedMs: Date.now() - t0 };
}

// A request of prompt characters and max_tokens: the preset charges
// ceil(chars/4) + max tokens (input and output apart under Anthropic).
function ask(c, [chars, max]) {
  const messages = [{ role: 'user', content: 'x'.repeat(chars) }];
  return create(c, { max_tokens: max, messages }).then(() => 200, (e) => e.status ?? 0);
}

const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

// probe pins every rule of sdk_test.go's presets (6/1s and 600 units a
// 1s per cost rule) for infer, each wave timed from the answers to the
// one before, so that late wake-ups shift the waves but break no step.
// A1 fills the request rule's second; A2, in two halves across the next
// whole second, is refused (no fixed 1s window explains the second half);
// A3, more than a second after A1 and less than one after A2, finds the
// window full only if refused requests count. Per cost rule, wave B
// fills it across a second's edge and one unit more is refused, and
// wave C, more than a second on and within 2 s of B, does the same
// inside one second: no fixed 1s and no 2 s window fits both. The
// costless requests of the first rule's waves put eight accepted requests
// within 2 s, more than A3 finds in any window of 2 s or more when
// refused requests are free: that reading explains no refusal of A3.
async function probe() {
  const c = client({ maxRetries: 0 });
  const wave = (count, req) => Promise.all(Array.from({ length: count }, () => ask(c, req)));
  const small = [12, 8], free = [0, 0];
  const units = isAnthropic
    ? [[[1200, 0], [4, 0], 2], [[0, 300], [0, 1], 0]] // input 300 then 1; output 300 then 1
    : [[[12, 297], [0, 1], 2]]; // 300 tokens, then 1
  await ask(c, [0, -1]); // a 400, unjudged: the connection is open before timing starts
  const t0 = Date.now();
  // A1 0.7 s before an even second, A2 across it, A3 after it: one 2 s
  // fixed window holds A1, none holds A1 and A3.
  await sleepUntil(Math.ceil((t0 + 800) / 2000) * 2000 - 700);
  const a1 = Date.now();
  await wave(6, small);
  const answered = Date.now(); // A1 has arrived, all of it
  await sleepUntil(a1 + 450);
  await wave(4, small);
  await sleepUntil(a1 + 750);
  await wave(4, small);
  await sleepUntil(answered + 1050);
  await wave(2, small);
  for (const [big, tiny, pad] of units) {
    const edge = Math.ceil((Date.now() + 1350) / 1000) * 1000;
    await sleepUntil(edge - 300);
    await Promise.all([wave(pad, free), wave(1, big)]);
    await sleepUntil(edge + 100);
    await wave(1, big);
    await wave(1, tiny);
    await sleepUntil(Date.now() + 1050);
    await Promise.all([wave(pad, free), wave(2, big)]);
    await wave(1, tiny);
  }
  return { ...seen, elapsedMs: Date.now() - t0 };
}

const out = mode === 'parse' ? await parse() : mode === 'probe' ? await probe() : await burst(Number(n));
process.stdout.write(JSON.stringify(out) + '\n');
