// The official SDKs, with their defaults, against rlcheck serve's presets;
// serve/sdk_test.go runs it. Usage: node sdk.mjs PROVIDER MODE BASEURL [N]
//   parse: one completion, one streamed, then requests without retries
//          until the SDK's own error class reports a 429.
//   burst: N requests at once with the SDK's default retries.
// It prints one JSON object: what the SDK parsed, or what the burst saw.
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const [provider, mode, baseURL, n] = process.argv.slice(2);
const seen = { sent: 0, statuses: {} };
const counting = async (url, init) => {
  seen.sent++;
  const res = await fetch(url, init);
  seen.statuses[res.status] = (seen.statuses[res.status] || 0) + 1;
  return res;
};
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

const out = mode === 'parse' ? await parse() : await burst(Number(n));
process.stdout.write(JSON.stringify(out) + '\n');
