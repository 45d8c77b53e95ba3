// The virtual clock and the protocol's answers (run with: node --test).
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { pick, strategies } from './limiters.mjs';
import { Refused, Run, runOnce, serve } from './rlcheck_adapter.mjs';

function runMsg(over = {}) {
  return {
    type: 'run', version: 1, run: 1, strategy: 's', scenario: 't', seed: 1, key: 'k',
    rules: [{ text: '2/1s', limit: 2, window_ns: 1e9, unit: '', kind: 'sliding', burst: 0, offset_ns: 0, zone: '' }],
    boundary: 'half-open', margin_ns: 0, units: [], workers: 1, max_in_flight: 0, timeout_ns: 0,
    calls: [0, 0, 0].map((a, id) => ({ id, arrival_ns: a, worker: 0, costs: [], duration_ns: 0 })),
    lateness: { dist: '1ms', draws_ns: [1_500_000] }, op_cost: { dist: '0s', draws_ns: [0] },
    ...over,
  };
}

const sleepy = (ms) => () => async (c, send) => {
  await new Promise((resolve) => setTimeout(resolve, ms * c.id));
  send();
};

test('a timer the loop slept for wakes late by the drawn lateness, one already due does not; performance.now is exact, Date.now whole ms', async () => {
  const seen = [];
  const strategy = () => async (c, send) => {
    await new Promise((resolve) => setTimeout(resolve, 10 * c.id));
    seen.push([performance.now(), Date.now()]);
    send();
  };
  const got = await runOnce(new Run(runMsg()), strategy);
  assert.deepEqual(got.map((a) => a.send_ns), [0, 11_500_000, 21_500_000]);
  assert.deepEqual(seen, [[0, 0], [11.5, 11], [21.5, 21]]);
});

test('the drawn values are taken in order and again from the first', async () => {
  const msg = runMsg({ lateness: { dist: 'x', draws_ns: [1, 2] } });
  const got = await runOnce(new Run(msg), sleepy(1000));
  assert.deepEqual(got.map((a) => a.send_ns), [0, 1_000_000_001, 2_000_000_002]);
});

test('arrivals start on time, without lateness', async () => {
  const msg = runMsg({ calls: [5, 7_000_123].map((a, id) => ({ id, arrival_ns: a, worker: 0, costs: [], duration_ns: 0 })) });
  const got = await runOnce(new Run(msg), () => async (c, send) => send());
  assert.deepEqual(got.map((a) => a.send_ns), [5, 7_000_123]);
});

test('a refusal, a deadlock and a timeout', async () => {
  const refused = await runOnce(new Run(runMsg()), () => async () => { throw new Refused('too big'); });
  assert.equal(refused[0].refused, 'too big');
  await assert.rejects(runOnce(new Run(runMsg()), () => () => new Promise(() => {})), /deadlock/);
  const msg = runMsg({ timeout_ns: 5e9 });
  const got = await runOnce(new Run(msg), sleepy(4000));
  assert.deepEqual(got.map((a) => a.cancelled ?? a.send_ns), [0, 4_001_500_000, true]);
});

test('every shipped strategy answers every call once, never before its arrival', async () => {
  for (const [name, strategy] of Object.entries(strategies)) {
    const got = await runOnce(new Run(runMsg({ strategy: name })), strategy);
    assert.equal(got.length, 3, name);
    got.forEach((a, i) => assert.ok(a.call === i && a.send_ns >= 0, `${name}: ${JSON.stringify(a)}`));
  }
});

test('serve writes the hello, then each run\'s answers and done', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (b) => { text += b; });
  input.end(`${JSON.stringify(runMsg())}\n`);
  await serve({ s: sleepy(0) }, input, output);
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines[0], { rlcheck_adapter: 1, strategies: ['s'] });
  assert.deepEqual(lines.at(-1), { run: 1, done: true });
  assert.equal(lines.length, 5);
});

test('limiters.mjs offers the strategies its arguments name, and refuses an unknown one', () => {
  assert.deepEqual(Object.keys(pick(['node-limiter'])), ['node-limiter']);
  assert.equal(pick([]), strategies);
  assert.throws(() => pick(['nope']), /unknown strategy nope/);
});
