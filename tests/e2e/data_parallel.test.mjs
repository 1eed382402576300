// End-to-end: `llmserve serve --data-parallel-size 2` (two engine ranks, the DP
// coordinator, one API server) on a tiny random-weight Qwen3, driven by the
// official `openai` npm client. Every request must succeed and both ranks must
// serve some; each engine logs "engine R: served N requests" when it stops,
// which is how the test counts per rank. Run by ctest:
//   node --test tests/e2e/data_parallel.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-dp-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let client;
let sent = 0;  // requests that reached an engine



before(async () => {
  makeTinyModel(modelDir, 7);
  port = await freePort();
  server = startServe(modelDir, port, ['--data-parallel-size', '2', '--max-num-seqs', '32']);
  await waitHealthy(server, 120_000);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    const serverLog = server.log;
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${serverLog}`);
    // Each engine says how many requests it accepted.
    const served = {};
    for (const m of serverLog.matchAll(/engine (\d+): served (\d+) requests/g)) served[m[1]] = Number(m[2]);
    assert.deepEqual(Object.keys(served).sort(), ['0', '1'], `per-rank counts missing\n${serverLog}`);
    assert.ok(served['0'] > 0 && served['1'] > 0, `both ranks must serve: ${JSON.stringify(served)}`);
    assert.equal(served['0'] + served['1'], sent, `every request reached exactly one engine: ${JSON.stringify(served)}`);
  }
  rmSync(work, { recursive: true, force: true });
});

test('48 concurrent requests over two ranks all succeed', async () => {
  const jobs = [];
  for (let i = 0; i < 48; i++) {
    // Long-tailed prompt lengths: mostly short, a few long.
    const words = i % 8 === 0 ? 120 : 3 + (i % 5);
    const prompt = Array.from({ length: words }, (_, k) => `word${(i * 7 + k) % 50}`).join(' ');
    const max_tokens = 4 + (i % 6);
    jobs.push(client.completions.create({ model: 'tiny', prompt, max_tokens, temperature: 0, ignore_eos: true })
      .then((r) => ({ r, max_tokens })));
  }
  sent += jobs.length;
  const results = await Promise.all(jobs);
  for (const { r, max_tokens } of results) {
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, max_tokens);
  }
});

test('X-data-parallel-rank pins a request; both ranks compute the same greedy text', async () => {
  const body = { model: 'tiny', prompt: 'The capital of France is', max_tokens: 8, temperature: 0, ignore_eos: true };
  const a = await client.completions.create(body, { headers: { 'X-data-parallel-rank': '0' } });
  const b = await client.completions.create(body, { headers: { 'X-data-parallel-rank': '1' } });
  sent += 2;
  assert.equal(a.usage.completion_tokens, 8);
  assert.equal(a.choices[0].text, b.choices[0].text);
  await assert.rejects(client.completions.create(body, { headers: { 'X-data-parallel-rank': '5' } }),
                       (e) => e.status === 503 && /rank 5/.test(e.message));
});

test('an aborted stream is cancelled on its rank and the ranks keep serving', async () => {
  const controller = new AbortController();
  const stream = await client.completions.create(
    { model: 'tiny', prompt: 'Count slowly:', max_tokens: 400, temperature: 0, ignore_eos: true, stream: true },
    { signal: controller.signal });
  sent += 1;
  let chunks = 0;
  try {
    for await (const _ of stream) {
      if (++chunks === 2) controller.abort();
    }
  } catch (e) {
    assert.ok(controller.signal.aborted, `stream failed before the abort: ${e}`);
  }
  assert.ok(chunks >= 2 && chunks < 400, `chunks before the abort took effect: ${chunks}`);
  const after = await Promise.all([0, 1, 2, 3].map((i) =>
    client.completions.create({ model: 'tiny', prompt: `after ${i}`, max_tokens: 3, temperature: 0, ignore_eos: true })));
  sent += after.length;
  for (const r of after) assert.equal(r.usage.completion_tokens, 3);
});
