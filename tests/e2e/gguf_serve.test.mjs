// End-to-end: `llmserve serve ./model.gguf`, a GGUF file named directly as
// vLLM and llama-server take it: the frontend reads the tokenizer and the chat
// template from the file's metadata, /v1/models reports the engines' context
// length. Run by ctest:
//   node --test tests/e2e/gguf_serve.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-gguf-'));
let server;
let client;

before(async () => {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--format', 'gguf',
                                       '--gguf-type', 'q8_0', '--out', work], { stdio: 'ignore' });
  rmSync(join(work, 'tokenizer.json'));  // only the file's own metadata is left to read
  rmSync(join(work, 'tokenizer_config.json'));
  const port = await freePort();
  server = startServe(join(work, 'model.gguf'), port, ['--dtype', 'auto']);
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

test('chat with the template from the GGUF metadata; the model list says the context length', async () => {
  const r = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }],
                                                   max_tokens: 4, temperature: 0 });
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.ok(r.usage.prompt_tokens > 5, 'the chat template wrapped the message');
  const models = await client.models.list();
  assert.equal(models.data[0].max_model_len, 512);
});
