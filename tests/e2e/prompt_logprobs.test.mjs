// End-to-end: vLLM's prompt_logprobs (an extra body field of the official
// client) and completions' echo on a tiny random-weight Qwen3. The prompt's
// logprobs are those of scripts/ref_forward.py's logits over the same
// weights; echo puts the prompt (and with logprobs its tokens' entries, the
// first null) before the output; echo with max_tokens 0 answers the prompt
// alone; streaming with prompt_logprobs is a 400.
// Run by ctest:
//   node --test tests/e2e/prompt_logprobs.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-plp-'));
const model = join(work, 'm');
let server;
let client;

const promptIds = [9707, 11, 1246, 525, 498, 30, 785, 3974];
const greedy = { model: 'tiny', temperature: 0 };

before(async () => {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--seed', '17',
                                       '--std', '0.15', '--norm-jitter', '0.2', '--out', model], { stdio: 'ignore' });
  const port = await freePort();
  // Prefill in chunks of 3 tokens: the prompt's logprobs come from several steps.
  server = startServe(model, port, ['--dtype', 'float32', '--long-prefill-token-threshold', '3']);
  await waitHealthy(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

const haveNumpy = () => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import numpy']);
    return true;
  } catch {
    return false;
  }
};

// ref_forward.py's logits for `tokens`: one Float32Array row per position.
function referenceLogits(tokens) {
  const out = join(work, 'ref.f32');
  execFileSync('/usr/bin/python3', ['scripts/ref_forward.py', model, '--tokens', tokens.join(','), '--out', out]);
  const bytes = readFileSync(out);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const vocab = all.length / tokens.length;
  return Array.from({ length: tokens.length }, (_, i) => all.subarray(i * vocab, (i + 1) * vocab));
}

function logSoftmax(row) {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let sum = 0;
  for (const v of row) sum += Math.exp(v - max);
  const lse = max + Math.log(sum);
  return (id) => row[id] - lse;
}

test('completions: prompt_logprobs are numpy\'s, rank and top-k included', async (t) => {
  const r = await client.completions.create({ ...greedy, prompt: promptIds, max_tokens: 2, prompt_logprobs: 2 });
  const plp = r.choices[0].prompt_logprobs;
  assert.equal(plp.length, promptIds.length);
  assert.equal(plp[0], null);
  for (let i = 1; i < promptIds.length; ++i) {
    const entry = plp[i];
    const own = entry[String(promptIds[i])];
    assert.ok(own, `position ${i}: the prompt token's entry`);
    assert.ok(Number.isInteger(own.rank) && own.rank >= 1);
    assert.equal(typeof own.decoded_token, 'string');
    const ranks = Object.values(entry).map((e) => e.rank).sort();
    assert.ok(ranks.includes(1) && ranks.includes(2), `position ${i}: the top 2 are there`);
    assert.ok(Object.keys(entry).length <= 3);
  }
  if (!haveNumpy()) {
    t.skip('/usr/bin/python3 with numpy is not available: values not compared');
    return;
  }
  const ref = referenceLogits(promptIds);
  for (let i = 1; i < promptIds.length; ++i) {
    const lp = logSoftmax(ref[i - 1]);
    for (const [id, e] of Object.entries(plp[i])) {
      assert.ok(Math.abs(e.logprob - lp(Number(id))) < 1e-3, `position ${i}, token ${id}: ${e.logprob} vs ${lp(Number(id))}`);
    }
    let best = 0;
    ref[i - 1].forEach((v, k) => { if (v > ref[i - 1][best]) best = k; });
    assert.equal(plp[i][String(best)]?.rank, 1, `position ${i}: numpy's best token is rank 1`);
  }
});

test('chat: prompt_logprobs on the response, one entry per prompt token', async () => {
  const r = await client.chat.completions.create({
    ...greedy, messages: [{ role: 'user', content: 'Hi there' }], max_tokens: 2, prompt_logprobs: 0 });
  assert.equal(r.prompt_logprobs[0], null);
  assert.equal(r.prompt_logprobs.length, r.usage.prompt_tokens);
  for (const entry of r.prompt_logprobs.slice(1)) assert.equal(Object.keys(entry).length, 1);
});

test('echo with logprobs: the prompt and its tokens come first, the first logprob null', async () => {
  const prompt = 'The quick brown fox';
  const plain = await client.completions.create({ ...greedy, prompt, max_tokens: 3, logprobs: 1 });
  const echoed = await client.completions.create({ ...greedy, prompt, max_tokens: 3, logprobs: 1, echo: true });
  const c = echoed.choices[0];
  const n = echoed.usage.prompt_tokens;
  assert.equal(c.text, prompt + plain.choices[0].text);
  assert.equal(c.logprobs.tokens.length, n + 3);
  assert.equal(c.logprobs.token_logprobs[0], null);
  assert.equal(c.logprobs.top_logprobs[0], null);
  assert.equal(c.logprobs.tokens.slice(0, n).join(''), prompt);
  assert.deepEqual(c.logprobs.token_logprobs.slice(n), plain.choices[0].logprobs.token_logprobs);
  assert.equal(c.logprobs.text_offset[0], 0);
  // The prompt entries are the prompt_logprobs the choice also carries (vLLM).
  for (let i = 1; i < n; ++i) {
    const logprob = c.logprobs.token_logprobs[i];
    assert.ok(Object.values(c.prompt_logprobs[i]).some((e) => e.logprob === logprob), `prompt token ${i}`);
  }
  // Streamed, the text is the same.
  const stream = await client.completions.create({ ...greedy, prompt, max_tokens: 3, echo: true, stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
  assert.equal(text, c.text);
});

test('echo with max_tokens 0 answers the prompt alone', async () => {
  const prompt = 'Once upon a time';
  const r = await client.completions.create({ ...greedy, prompt, max_tokens: 0, echo: true, logprobs: 0 });
  const c = r.choices[0];
  assert.equal(c.text, prompt);
  assert.equal(c.finish_reason, 'length');
  assert.equal(c.logprobs.tokens.length, r.usage.prompt_tokens);
  assert.equal(c.logprobs.token_logprobs[0], null);
  assert.ok(c.logprobs.token_logprobs.slice(1).every((v) => typeof v === 'number'));
  await assert.rejects(client.completions.create({ ...greedy, prompt, max_tokens: 0 }),
                       (e) => e.status === 400 && e.error?.param === 'max_tokens');
});

test('streaming with prompt_logprobs is a 400', async () => {
  await assert.rejects(client.completions.create({ ...greedy, prompt: 'Hi', prompt_logprobs: 1, stream: true }),
                       (e) => e.status === 400 && e.error?.param === 'prompt_logprobs');
});
