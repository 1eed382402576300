// End-to-end: `llmserve serve MODEL --tokenizer DIR` for a model directory
// without tokenizer files (as vLLM users serve a bare checkpoint or a GGUF
// with a Hugging Face tokenizer): the frontend's tokenizer and chat template
// and the engine's structured-output vocabulary all come from DIR. Run by ctest:
//   node --test tests/e2e/tokenizer_flag.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, makeTinyModel, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-tok-'));
const full = join(work, 'full');
const bare = join(work, 'bare');
let server;
let client;

before(async () => {
  makeTinyModel(full, 5);
  mkdirSync(bare);
  for (const f of ['config.json', 'generation_config.json', 'model.safetensors']) copyFileSync(join(full, f), join(bare, f));
  const port = await freePort();
  server = startServe(bare, port, ['--tokenizer', full]);
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

test('chat (template from --tokenizer) and a constrained choice (engine vocabulary from --tokenizer)', async () => {
  const r = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }],
                                                   max_tokens: 4, temperature: 0 });
  assert.ok(r.usage.prompt_tokens > 5, 'the chat template wrapped the message');
  const c = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'pick' }],
                                                   temperature: 1.0, seed: 2, guided_choice: ['red', 'green'] });
  assert.ok(['red', 'green'].includes(c.choices[0].message.content), c.choices[0].message.content);
});

test('the CLI commands read the same flag', () => {
  const ids = (dir, extra) => execFileSync(join(bin, 'llmserve'), ['tokenize', dir, ...extra], { input: '"hello"\n' }).toString();
  assert.equal(ids(bare, ['--tokenizer', full]), ids(full, []));
  assert.throws(() => execFileSync(join(bin, 'llmserve'), ['tokenize', bare], { input: '"hello"\n', stdio: 'pipe' }),
                /tokenizer\.json/);
});
