// End-to-end: the pooling runner (--runner pooling, vLLM's embedding
// serving) with the official client's embeddings.create and raw /v1/embeddings
// and /pooling requests, on a tiny random-weight Qwen3 in float32 with
// prompts prefilled in chunks of 3 tokens. The vectors are those of
// scripts/ref_embed.py (numpy) over the same weights, normalized as asked;
// a prompt embedded in a batch is bitwise the one embedded alone. One server
// runs its model on two tensor-parallel worker processes.
// Run by ctest:
//   node --test tests/e2e/embeddings.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-embed-'));
const model = join(work, 'm');
const servers = {};

const prompts = [[9707, 11, 1246, 525, 498, 30, 785, 3974], [40, 1079, 264], [3838, 374, 279, 6722, 315, 9625, 30, 1, 2, 3, 4]];

async function start(name, args) {
  const port = await freePort();
  const server = startServe(model, port, ['--long-prefill-token-threshold', '3', ...args]);
  await waitHealthy(server);
  const base = `http://127.0.0.1:${port}`;
  servers[name] = { server, base, client: new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 }) };
}

before(async () => {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--seed', '23',
                                       '--std', '0.15', '--norm-jitter', '0.2', '--out', model], { stdio: 'ignore' });
  await Promise.all([start('last', ['--runner', 'pooling']),
                     start('mean', ['--task', 'embed', '--pooler-config', '{"pooling_type": "MEAN", "normalize": false}']),
                     start('tp', ['--runner', 'pooling', '--tensor-parallel-size', '2']),
                     start('generate', [])]);
});

after(async () => {
  for (const { server } of Object.values(servers)) {
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

// ref_embed.py's pooled vectors (not normalized), one per prompt.
function reference(pool, list) {
  const out = join(work, `ref-${pool}.f32`);
  execFileSync('/usr/bin/python3', ['scripts/ref_embed.py', model, '--pool', pool, '--prompts',
                                    ...list.map((p) => p.join(',')), '--out', out]);
  const bytes = readFileSync(out);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  const h = all.length / list.length;
  return list.map((_, i) => Array.from(all.subarray(i * h, (i + 1) * h)));
}

const normalized = (v) => {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / norm);
};

function assertClose(ours, ref, label) {
  assert.equal(ours.length, ref.length, `${label}: length`);
  const scale = Math.max(...ref.map(Math.abs));
  const err = Math.max(...ours.map((x, i) => Math.abs(x - ref[i]))) / scale;
  assert.ok(err <= 1e-5, `${label}: max relative error ${err} vs ref_embed.py`);
}

async function post(name, path, body) {
  const res = await fetch(`${servers[name].base}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

test('LAST pooling, normalized: the official client gets ref_embed.py vectors, batch = alone bitwise', async (t) => {
  if (!haveNumpy()) return t.skip('/usr/bin/python3 with numpy is not available');
  const { client } = servers.last;
  // The client asks for base64 and decodes it: the bytes are little-endian float32.
  const batch = await client.embeddings.create({ model: 'tiny', input: prompts });
  assert.equal(batch.object, 'list');
  assert.equal(batch.data.length, prompts.length);
  assert.equal(batch.usage.prompt_tokens, prompts.reduce((s, p) => s + p.length, 0));
  const ref = reference('last', prompts);
  for (let i = 0; i < prompts.length; ++i) {
    assert.equal(batch.data[i].index, i);
    assertClose(batch.data[i].embedding, normalized(ref[i]), `prompt ${i}`);
    const norm = Math.sqrt(batch.data[i].embedding.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `prompt ${i}: norm ${norm}`);
    const alone = await client.embeddings.create({ model: 'tiny', input: prompts[i], encoding_format: 'float' });
    assert.deepEqual(alone.data[0].embedding, batch.data[i].embedding, `prompt ${i}: alone vs in a batch`);
  }
});

test('/pooling answers the same vectors; normalize false gives the raw pooled state', async (t) => {
  if (!haveNumpy()) return t.skip('/usr/bin/python3 with numpy is not available');
  const pooled = await post('last', '/pooling', { model: 'tiny', input: prompts[0] });
  assert.equal(pooled.status, 200, JSON.stringify(pooled.body));
  assert.match(pooled.body.id, /^pool-/);
  assert.equal(pooled.body.data[0].object, 'pooling');
  const embedded = await post('last', '/v1/embeddings', { input: prompts[0], encoding_format: 'float' });
  assert.match(embedded.body.id, /^embd-/);
  assert.deepEqual(pooled.body.data[0].data, embedded.body.data[0].embedding);
  const raw = await post('last', '/v1/embeddings', { input: prompts[1], normalize: false });
  assertClose(raw.body.data[0].embedding, reference('last', [prompts[1]])[0], 'normalize false');
  const text = await servers.last.client.embeddings.create({ model: 'tiny', input: 'Hello, embeddings!' });
  assert.ok(text.usage.prompt_tokens > 0);
});

test('MEAN pooling from --task embed --pooler-config, not normalized', async (t) => {
  if (!haveNumpy()) return t.skip('/usr/bin/python3 with numpy is not available');
  const res = await servers.mean.client.embeddings.create({ model: 'tiny', input: prompts, encoding_format: 'float' });
  const ref = reference('mean', prompts);
  for (let i = 0; i < prompts.length; ++i) assertClose(res.data[i].embedding, ref[i], `mean prompt ${i}`);
});

test('two tensor-parallel workers pool the same vectors (within float32 rounding)', async (t) => {
  if (!haveNumpy()) return t.skip('/usr/bin/python3 with numpy is not available');
  const res = await servers.tp.client.embeddings.create({ model: 'tiny', input: prompts, encoding_format: 'float' });
  const ref = reference('last', prompts);
  for (let i = 0; i < prompts.length; ++i) assertClose(res.data[i].embedding, normalized(ref[i]), `tp prompt ${i}`);
});

test('what a runner does not serve, and output-changing fields it cannot honour, are 400s', async () => {
  const cases = [
    ['last', '/v1/completions', { prompt: 'hi', max_tokens: 2 }, /does not support Completions API/],
    ['last', '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] }, /does not support Chat Completions API/],
    ['generate', '/v1/embeddings', { input: 'hi' }, /does not support Embeddings API/],
    ['last', '/v1/embeddings', { input: 'hi', dimensions: 8 }, /matryoshka/],
    ['last', '/v1/embeddings', { input: 'hi', encoding_format: 'int8' }, /encoding_format/],
    ['last', '/pooling', { input: 'hi', task: 'classify' }, /task 'classify'/],
    ['last', '/v1/embeddings', { input: [] }, /must not be empty/],
    ['last', '/v1/embeddings', { input: Array(600).fill(5) }, /maximum context length/],
  ];
  for (const [name, path, body, message] of cases) {
    const res = await post(name, path, body);
    assert.equal(res.status, 400, `${path} ${JSON.stringify(body).slice(0, 60)}: ${JSON.stringify(res.body)}`);
    assert.match(res.body.error?.message ?? res.body.message ?? '', message);
  }
  const truncated = await post('last', '/v1/embeddings', { input: Array(600).fill(5), truncate_prompt_tokens: 8 });
  assert.equal(truncated.status, 200, JSON.stringify(truncated.body));
  assert.equal(truncated.body.usage.prompt_tokens, 8);
});
