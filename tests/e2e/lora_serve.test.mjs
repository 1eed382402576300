// End-to-end: a tiny Qwen3 served with two LoRA adapters written by
// `llmserve make-model --lora-adapter` (--enable-lora --lora-modules, in both
// of vLLM's forms). The official client sees each adapter in the model list
// with its parent, picks one with `model`, gets answers that differ from the
// base model's and from each other, and the same greedy answer whichever
// adapters share its steps; an unknown model is still a 404;
// vllm:lora_requests_info shows which adapters ran.
// Run by ctest:
//   node --test tests/e2e/lora_serve.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-lora-'));
const model = join(work, 'm');
let server;
let client;
let port;

before(async () => {
  const make = (args) => execFileSync(join(bin, 'llmserve'), ['make-model', ...args], { stdio: 'ignore' });
  make(['--preset', 'tiny', '--arch', 'qwen3', '--out', model, '--seed', '5']);
  make(['--lora-adapter', join(work, 'sql'), '--base', model, '--lora-rank', '8', '--std', '0.08', '--seed', '1']);
  make(['--lora-adapter', join(work, 'chat'), '--base', model, '--lora-rank', '16', '--lora-targets',
        'q_proj,v_proj,down_proj', '--std', '0.08', '--seed', '2']);
  port = await freePort();
  server = startServe(model, port, ['--enable-lora', '--max-loras', '2', '--max-lora-rank', '16', '--lora-modules',
                                    `sql=${join(work, 'sql')}`,
                                    JSON.stringify({ name: 'chat', path: join(work, 'chat'), base_model_name: 'tiny' })]);
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

const complete = async (name, prompt) => (await client.completions.create({
  model: name, prompt, max_tokens: 8, temperature: 0, ignore_eos: true,
})).choices[0].text;

test('the model list has a card per adapter, with its path and parent', async () => {
  const models = (await client.models.list()).data;
  assert.deepEqual(models.map((m) => m.id), ['tiny', 'sql', 'chat']);
  assert.equal(models[1].root, join(work, 'sql'));
  assert.equal(models[1].parent, 'tiny');
  assert.equal(models[1].max_model_len, undefined);
  assert.equal(models[2].parent, 'tiny');
});

test('each adapter answers differently, alike alone and in a mixed batch', async () => {
  const prompt = 'The adapters are';
  const alone = {};
  for (const name of ['tiny', 'sql', 'chat']) alone[name] = await complete(name, prompt);
  assert.notEqual(alone.sql, alone.tiny);
  assert.notEqual(alone.chat, alone.tiny);
  assert.notEqual(alone.sql, alone.chat);
  const names = ['sql', 'tiny', 'chat', 'sql', 'chat', 'tiny'];
  const batch = await Promise.all(names.map((n) => complete(n, prompt)));
  names.forEach((n, i) => assert.equal(batch[i], alone[n], `${n} in a batch`));
});

test('vllm:lora_requests_info saw the adapters run and now lists none', async () => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const series = text.split('\n').filter((l) => l.startsWith('vllm:lora_requests_info{')).map((l) => {
    const labels = Object.fromEntries([...l.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    return { labels, value: Number(l.slice(l.lastIndexOf(' ') + 1)) };
  });
  assert.ok(series.length > 0, text);
  for (const s of series) assert.equal(s.labels.max_lora, '2');
  const ran = new Set(series.flatMap((s) => s.labels.running_lora_adapters.split(',')).filter((n) => n));
  assert.deepEqual([...ran].sort(), ['chat', 'sql']);
  // The current state (greatest time): every request has finished.
  const latest = series.reduce((a, b) => (b.value > a.value ? b : a));
  assert.equal(latest.labels.running_lora_adapters, '');
  assert.equal(latest.labels.waiting_lora_adapters, '');
  assert.ok(Math.abs(latest.value - Date.now() / 1000) < 600, 'the value is Unix seconds');
});

// Greedy token ids for a token-id prompt, as the served adapter picks them.
const greedyIds = async (name, prompt, n) => {
  const r = await client.completions.create({ model: name, prompt, max_tokens: n, temperature: 0, ignore_eos: true,
                                              logprobs: 1, return_tokens_as_token_ids: true });
  return r.choices[0].logprobs.tokens.map((t) => Number(t.slice('token_id:'.length)));
};

test("an adapter's greedy tokens are those of numpy over the merged weights W + s·B·A", async (t) => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import numpy']);
  } catch {
    t.skip('/usr/bin/python3 with numpy is not available');
    return;
  }
  const prompt = [9707, 11, 1246, 525, 498, 30];
  for (const name of ['sql', 'chat']) {
    const got = await greedyIds(name, prompt, 4);
    const fed = [...prompt, ...got.slice(0, -1)];
    const out = join(work, `${name}.f32`);
    execFileSync('/usr/bin/python3', ['scripts/ref_forward.py', model, '--tokens', fed.join(','), '--out', out,
                                      '--lora', join(work, name)]);
    const buf = readFileSync(out);
    const logits = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    const vocab = logits.length / fed.length;
    const want = [];
    for (let p = prompt.length - 1; p < fed.length; ++p) {
      let best = 0;
      for (let v = 1; v < vocab; ++v) if (logits[p * vocab + v] > logits[p * vocab + best]) best = v;
      want.push(best);
    }
    assert.deepEqual(got, want, `${name}: served greedy tokens vs ref_forward.py --lora`);
  }
});

test('an unknown model is a 404', async () => {
  await assert.rejects(complete('nope', 'x'), (e) => e.status === 404);
});
