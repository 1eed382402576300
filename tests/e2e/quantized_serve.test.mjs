// End-to-end: int8 models. A float checkpoint served with `--quantization
// int8` on two tensor-parallel workers answers greedy completions with the
// text `llmserve generate` gives for the same model exported as a
// compressed-tensors W8A8 checkpoint (`make-model --format compressed-tensors`),
// so the flag reaches the worker processes and both ways give one int8 model.
// A flag the model contradicts stops the server with a message naming it.
// Run by ctest:
//   node --test tests/e2e/quantized_serve.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-int8-'));
const prompts = ['The int8 model says', 'Quantized weights, per channel', 'Seven'];
let server;
let client;

// Weights large enough that int8 rounding changes some greedy tokens.
const makeModel = (out, extra) => execFileSync(
  join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--seed', '13', '--std', '0.15', '--norm-jitter', '0.2',
                          '--out', out, ...extra], { stdio: 'ignore' });

// Greedy texts of `prompts` from `llmserve generate MODEL_DIR`.
function generate(modelDir) {
  const file = join(work, 'prompts.jsonl'), out = join(work, 'out.jsonl');
  writeFileSync(file, prompts.map((prompt) => JSON.stringify({ prompt })).join('\n') + '\n');
  execFileSync(join(bin, 'llmserve'), ['generate', modelDir, '--prompts', file, '--output', out, '--max-tokens', '8',
                                       '--temperature', '0', '--ignore-eos', '--kv-cache-memory', '64M'],
               { stdio: 'ignore' });
  return readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l).text);
}

before(async () => {
  makeModel(join(work, 'float'), []);
  makeModel(join(work, 'int8'), ['--format', 'compressed-tensors']);
  const port = await freePort();
  server = startServe(join(work, 'float'), port, ['--quantization', 'int8', '--tensor-parallel-size', '2']);
  await waitHealthy(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

test('--quantization int8 serves what the compressed-tensors export generates', async () => {
  const want = generate(join(work, 'int8'));
  const got = await Promise.all(prompts.map((prompt) => client.completions.create({
    model: 'tiny', prompt, max_tokens: 8, temperature: 0, ignore_eos: true })));
  assert.deepEqual(got.map((r) => r.choices[0].text), want);
  assert.notDeepEqual(generate(join(work, 'float')), want, 'the float model answers otherwise');
});

test('a --quantization the model contradicts is an error naming both', () => {
  let err;
  try {
    execFileSync(join(bin, 'llmserve'), ['serve', join(work, 'int8'), '--quantization', 'int8', '--port', '1',
                                         '--kv-cache-memory', '64M'], { stdio: 'pipe', timeout: 60_000 });
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'the server should not start');
  assert.notEqual(err.status, 0);
  assert.match(String(err.stderr), /already quantized \(compressed-tensors\)/);
});
