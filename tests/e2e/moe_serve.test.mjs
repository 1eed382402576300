// End-to-end: mixture-of-experts models (the tiny Qwen3-MoE and DeepSeek-V3
// of `llmserve make-model`; DeepSeek's latent attention too) served with two
// tensor-parallel workers, each holding half of every expert (or, with
// --enable-expert-parallel, half of the experts whole), answer the official
// client's chat completions, and greedy answers do not change with the batch
// they share.
// Run by ctest:
//   node --test tests/e2e/moe_serve.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

// Serves a tiny model of `arch` on two TP workers (and `flags`), runs `body(client)`, stops it.
async function withServedModel(arch, flags, body) {
  const work = mkdtempSync(join(tmpdir(), `llmserve-moe-${arch}-`));
  let server;
  try {
    execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', arch, '--out', work,
                                         '--seed', '5'], { stdio: 'ignore' });
    const port = await freePort();
    server = startServe(work, port, ['--tensor-parallel-size', '2', '--max-model-len', '512', ...flags]);
    await waitHealthy(server);
    await body(new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0,
                            timeout: 60_000 }));
  } finally {
    if (server) {
      const exit = await stopServe(server);
      assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
    }
    rmSync(work, { recursive: true, force: true });
  }
}

const ask = (client, content) => client.chat.completions.create({
  model: 'tiny', messages: [{ role: 'user', content }], max_tokens: 8, temperature: 0, ignore_eos: true,
});

const runs = [
  ['qwen3_moe', []],
  ['deepseek_v3', ['--enable-expert-parallel', '--expert-placement-strategy', 'round_robin']],
];
for (const [arch, flags] of runs) {
  test(`a chat completion from ${arch} ${flags.join(' ')}; alone and in a batch alike`, async () => {
    await withServedModel(arch, flags, async (client) => {
      const alone = await ask(client, 'Which expert answers?');
      assert.equal(alone.choices[0].finish_reason, 'length');
      assert.equal(alone.usage.completion_tokens, 8);
      assert.ok(alone.choices[0].message.content.length > 0);
      const batch = await Promise.all([ask(client, 'Which expert answers?'), ask(client, 'Something else entirely'),
                                       ask(client, 'A third prompt, longer than the others, to share the steps')]);
      assert.equal(batch[0].choices[0].message.content, alone.choices[0].message.content);
    });
  });
}
