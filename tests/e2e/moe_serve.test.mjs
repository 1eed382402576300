// End-to-end: a mixture-of-experts model (the tiny Qwen3-MoE of `llmserve
// make-model --arch qwen3_moe`) served with two tensor-parallel workers, each
// holding half of every expert, answers the official client's chat
// completions, and greedy answers do not change with the batch they share.
// Run by ctest:
//   node --test tests/e2e/moe_serve.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-moe-'));
let server;
let client;

before(async () => {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3_moe', '--out', work,
                                       '--seed', '5'], { stdio: 'ignore' });
  const port = await freePort();
  server = startServe(work, port, ['--tensor-parallel-size', '2', '--max-model-len', '512']);
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

const ask = (content) => client.chat.completions.create({
  model: 'tiny', messages: [{ role: 'user', content }], max_tokens: 8, temperature: 0, ignore_eos: true,
});

test('a chat completion from the MoE model; alone and in a batch alike', async () => {
  const alone = await ask('Which expert answers?');
  assert.equal(alone.choices[0].finish_reason, 'length');
  assert.equal(alone.usage.completion_tokens, 8);
  assert.ok(alone.choices[0].message.content.length > 0);
  const batch = await Promise.all([ask('Which expert answers?'), ask('Something else entirely'),
                                   ask('A third prompt, longer than the others, to share the steps')]);
  assert.equal(batch[0].choices[0].message.content, alone.choices[0].message.content);
});
