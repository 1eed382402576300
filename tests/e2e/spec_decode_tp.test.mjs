// End-to-end: n-gram speculative decoding with two tensor-parallel workers.
// Every rank verifies the same drafts, so greedy answers are bitwise those of
// the same two-worker server without speculation, and drafts are accepted
// (vllm:spec_decode_num_accepted_tokens in /metrics).
// Run by ctest:
//   node --test tests/e2e/spec_decode_tp.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { e2eDevice, freePort, makeTinyModel, startServe, stopServe, waitHealthy } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-spec-tp-'));
const servers = {};
const spec = JSON.stringify({ method: 'ngram', num_speculative_tokens: 3, prompt_lookup_min: 1,
                              prompt_lookup_max: 3 });

before(async () => {
  if (e2eDevice !== 'cpu') return;
  makeTinyModel(work, 11);
  for (const [name, extra] of [['plain', []], ['spec', ['--speculative-config', spec]]]) {
    const port = await freePort();
    const server = startServe(work, port, ['--tensor-parallel-size', '2', ...extra]);
    servers[name] = { server, port };
  }
  for (const { server } of Object.values(servers)) await waitHealthy(server);
});

after(async () => {
  for (const { server } of Object.values(servers)) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

const complete = (port, prompt) =>
  new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 })
    .completions.create({ model: 'tiny', prompt, max_tokens: 40, temperature: 0, ignore_eos: true });

test('greedy answers with speculation on two TP workers equal those without', { skip: e2eDevice !== 'cpu' &&
     'speculative decoding runs on the CPU backend only' }, async () => {
  const prompts = ['one two three one two three one two', 'The quick brown fox', 'a b a b a b a b a b'];
  const plain = await Promise.all(prompts.map((p) => complete(servers.plain.port, p)));
  const drafted = await Promise.all(prompts.map((p) => complete(servers.spec.port, p)));
  for (let i = 0; i < prompts.length; ++i) {
    assert.equal(drafted[i].choices[0].text, plain[i].choices[0].text, `prompt ${i}`);
    assert.equal(drafted[i].usage.completion_tokens, 40);
  }
  const metrics = await (await fetch(`http://127.0.0.1:${servers.spec.port}/metrics`)).text();
  const accepted = metrics.split('\n').find((l) => l.startsWith('vllm:spec_decode_num_accepted_tokens_total'));
  assert.ok(accepted && Number(accepted.split(' ').pop()) > 0, `no draft accepted:\n${accepted}`);
});
