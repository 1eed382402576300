// End-to-end: LoRA adapters loaded and unloaded at run time, as vLLM does it
// (VLLM_ALLOW_RUNTIME_LORA_UPDATING=true, POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter). The runtime server has two API servers and two
// DP ranks, --max-cpu-loras 1 and an API key; a static server serves the same
// adapters from start (--lora-modules) without the env var and gives the
// reference answers. Checked: the routes are absent without the env var;
// after a 200 the adapter is listed and answers on every rank (pinned with
// X-data-parallel-rank) and on fresh connections (either API server) exactly
// as the static server; vLLM's errors for a duplicate name, a bad path, a
// rank above --max-lora-rank, an unsupported target module, and an unknown
// name on unload; a request running while its adapter is unloaded finishes
// unchanged; after the unload the name is a 404; a reload works again; an
// engine rank restarted after a crash serves the run-time adapters again; with
// --tensor-parallel-size 2 every worker loads and unloads the adapter.
//   node --test tests/e2e/lora_runtime.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startLauncher, waitHealthy, waitForLog, logCount, stopServe, recordTree, waitUntil }
  from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-lora-runtime-'));
const model = join(work, 'm');
const key = 'lora-secret';
const common = ['--served-model-name', 'tiny', '--max-model-len', '512', '--kv-cache-memory', '64M', '--dtype',
                'float32', '--enable-lora', '--max-lora-rank', '16'];
let reference;  // --lora-modules from start, no env var
let runtime;    // VLLM_ALLOW_RUNTIME_LORA_UPDATING=true
let tensorParallel;  // the same, with --tensor-parallel-size 2
let refClient;
let client;

before(async () => {
  const make = (args) => execFileSync(join(bin, 'llmserve'), ['make-model', ...args], { stdio: 'ignore' });
  make(['--preset', 'tiny', '--arch', 'qwen3', '--out', model, '--seed', '5']);
  make(['--lora-adapter', join(work, 'sql'), '--base', model, '--lora-rank', '8', '--std', '0.08', '--seed', '1']);
  make(['--lora-adapter', join(work, 'chat'), '--base', model, '--lora-rank', '16', '--lora-targets',
        'q_proj,v_proj,down_proj', '--std', '0.08', '--seed', '2']);
  make(['--lora-adapter', join(work, 'big'), '--base', model, '--lora-rank', '32', '--seed', '3']);
  cpSync(join(work, 'sql'), join(work, 'embed'), { recursive: true });
  const config = JSON.parse(readFileSync(join(work, 'embed', 'adapter_config.json'), 'utf8'));
  config.target_modules = ['q_proj', 'embed_tokens'];
  writeFileSync(join(work, 'embed', 'adapter_config.json'), JSON.stringify(config));

  const refPort = await freePort();
  reference = startLauncher(refPort, [model, ...common, '--max-loras', '2', '--lora-modules',
                                      `sql=${join(work, 'sql')}`, `chat=${join(work, 'chat')}`],
                            { VLLM_ALLOW_RUNTIME_LORA_UPDATING: '' });
  const port = await freePort();
  runtime = startLauncher(port, [model, ...common, '--max-loras', '1', '--max-cpu-loras', '1',
                                 '--api-server-count', '2', '--data-parallel-size', '2', '--api-key', key,
                                 '--restart-policy', 'on-failure'],
                          { VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' });
  tensorParallel = startLauncher(await freePort(), [model, ...common, '--tensor-parallel-size', '2'],
                                 { VLLM_ALLOW_RUNTIME_LORA_UPDATING: '1' });
  await waitHealthy(reference);
  await waitHealthy(runtime);
  await waitHealthy(tensorParallel);
  assert.ok(await waitForLog(runtime, /frontend \d listening on/, 60_000, 2), runtime.log);
  const opts = { maxRetries: 0, timeout: 60_000 };
  refClient = new OpenAI({ baseURL: `http://127.0.0.1:${refPort}/v1`, apiKey: 'unused', ...opts });
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, ...opts });
});

after(async () => {
  for (const server of [reference, runtime, tensorParallel]) {
    if (!server) continue;
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

// One HTTP request on a connection of its own (so the kernel may hand it to either API server).
function send(server, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, agent: false,
                               headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text, type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}
const auth = { authorization: `Bearer ${key}` };
const load = (name, path) => send(runtime, 'POST', '/v1/load_lora_adapter', { lora_name: name, lora_path: path }, auth);
const unload = (name) => send(runtime, 'POST', '/v1/unload_lora_adapter', { lora_name: name }, auth);
const errorOf = (r) => JSON.parse(r.text).error;

const params = (name, extra = {}) => ({ model: name, prompt: 'The adapters are', max_tokens: 8, temperature: 0,
                                        ignore_eos: true, ...extra });
const refText = async (name, extra) => (await refClient.completions.create(params(name, extra))).choices[0].text;
// The runtime server's answer from DP rank `rank`.
const rankText = async (name, rank, extra) => (await client.completions.create(
  params(name, extra), { headers: { 'X-data-parallel-rank': String(rank) } })).choices[0].text;
const modelIds = async (server, headers) =>
  JSON.parse((await send(server, 'GET', '/v1/models', undefined, headers)).text).data.map((m) => m.id);

test('without VLLM_ALLOW_RUNTIME_LORA_UPDATING the routes are absent', async () => {
  for (const path of ['/v1/load_lora_adapter', '/v1/unload_lora_adapter']) {
    const r = await send(reference, 'POST', path, { lora_name: 'x', lora_path: join(work, 'sql') });
    assert.equal(r.status, 404, `${path}: ${r.text}`);
  }
  assert.deepEqual(await modelIds(reference), ['tiny', 'sql', 'chat']);
});

test('the routes need the API key', async () => {
  const r = await send(runtime, 'POST', '/v1/load_lora_adapter', { lora_name: 'sql', lora_path: join(work, 'sql') });
  assert.equal(r.status, 401, r.text);
});

test('a loaded adapter is listed and answers on every rank and API server as from start', async () => {
  const r = await load('sql', join(work, 'sql'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.text, "Success: LoRA adapter 'sql' added successfully.");
  for (let i = 0; i < 6; ++i) assert.deepEqual(await modelIds(runtime, auth), ['tiny', 'sql']);
  const card = (await client.models.list()).data[1];
  assert.equal(card.root, join(work, 'sql'));
  assert.equal(card.parent, 'tiny');
  const want = await refText('sql');
  assert.notEqual(want, await refText('tiny'));
  for (const rank of [0, 1]) assert.equal(await rankText('sql', rank), want, `rank ${rank}`);
  // Fresh connections: whichever API server takes each knows the adapter.
  for (let i = 0; i < 8; ++i) {
    const c = await send(runtime, 'POST', '/v1/completions', params('sql'), auth);
    assert.equal(c.status, 200, c.text);
    assert.equal(JSON.parse(c.text).choices[0].text, want);
  }
});

test("vLLM's errors for bad loads, and the server keeps serving", async () => {
  let r = await load('sql', join(work, 'chat'));
  assert.equal(r.status, 400, r.text);
  assert.equal(errorOf(r).message, "The lora adapter 'sql' has already been loaded.");
  r = await load('ghost', join(work, 'no-such-dir'));
  assert.equal(r.status, 404, r.text);
  assert.match(errorOf(r).message, /No adapter found for/);
  r = await load('big', join(work, 'big'));
  assert.equal(r.status, 400, r.text);
  assert.match(errorOf(r).message, /greater than max_lora_rank 16/);
  r = await load('embed', join(work, 'embed'));
  assert.equal(r.status, 400, r.text);
  assert.match(errorOf(r).message, /embed_tokens/);
  r = await send(runtime, 'POST', '/v1/load_lora_adapter', { lora_name: 'x' }, auth);
  assert.equal(r.status, 400, r.text);
  assert.equal(errorOf(r).message, "Both 'lora_name' and 'lora_path' must be provided.");
  r = await unload('never-loaded');
  assert.equal(r.status, 404, r.text);
  assert.equal(errorOf(r).message, "The lora adapter 'never-loaded' cannot be found.");
  assert.deepEqual(await modelIds(runtime, auth), ['tiny', 'sql']);
  assert.equal(await rankText('sql', 0), await refText('sql'));
});

test('with --max-cpu-loras 1, alternating adapters answer as with both resident', async () => {
  assert.equal((await load('chat', join(work, 'chat'))).status, 200);
  const want = { sql: await refText('sql'), chat: await refText('chat') };
  assert.notEqual(want.sql, want.chat);
  for (const name of ['chat', 'sql', 'chat', 'sql']) {
    for (const rank of [0, 1]) assert.equal(await rankText(name, rank), want[name], `${name} on rank ${rank}`);
  }
  const names = ['sql', 'chat', 'tiny', 'chat', 'sql'];
  const batch = await Promise.all(names.map((n) => rankText(n, 0)));
  const alone = await Promise.all(names.map((n) => refText(n)));
  assert.deepEqual(batch, alone);
});

test('unloading an adapter a request is using lets it finish unchanged; then the name is a 404', async () => {
  const long = { max_tokens: 400 };
  const want = await refText('chat', long);
  const stream = await client.completions.create({ ...params('chat', long), stream: true },
                                                 { headers: { 'X-data-parallel-rank': '1' } });
  let text = '';
  let unloaded;
  let answeredWhileStreaming = false;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.text ?? '';
    if (!unloaded) unloaded = unload('chat').then((r) => { answeredWhileStreaming = true; return r; });
  }
  const streamedPastTheUnload = answeredWhileStreaming;
  const r = await unloaded;
  assert.equal(r.status, 200, r.text);
  assert.equal(r.text, "Success: LoRA adapter 'chat' removed successfully.");
  assert.equal(text, want);
  assert.ok(streamedPastTheUnload, 'the unload was answered while the request still streamed');
  // The engine that ran it frees the adapter once the request is done.
  assert.ok(await waitForLog(runtime, /unloaded LoRA adapter 'chat' released/, 30_000), runtime.log);
  assert.deepEqual(await modelIds(runtime, auth), ['tiny', 'sql']);
  await assert.rejects(client.completions.create(params('chat')), (e) => e.status === 404);
  for (let i = 0; i < 4; ++i) {
    const c = await send(runtime, 'POST', '/v1/completions', params('chat'), auth);
    assert.equal(c.status, 404, c.text);
  }
  assert.equal((await unload('chat')).status, 404);
});

test('an unloaded name can be loaded again, from another path', async () => {
  assert.equal((await load('chat', join(work, 'sql'))).status, 200);
  const want = await refText('sql');
  for (const rank of [0, 1]) assert.equal(await rankText('chat', rank), want, `rank ${rank}`);
});

// The engine process of DP rank `rank`.
function enginePid(rank) {
  for (const p of recordTree(runtime)) {
    if (!p.comm.startsWith('llmserve-engine')) continue;
    try {
      if (readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').includes(`--data-parallel-rank=${rank}`)) return p.pid;
    } catch {}
  }
  return null;
}

test('an engine rank restarted after a crash is given the run-time adapters again', async () => {
  const want = { sql: await refText('sql'), chat: await refText('sql') };  // chat was reloaded from sql's path
  const readyBefore = logCount(runtime, /engine rank 1 ready/);
  const victim = enginePid(1);
  assert.ok(victim, 'the rank 1 engine process');
  process.kill(victim, 'SIGKILL');
  assert.ok(await waitForLog(runtime, /engine rank 1 ready/, 90_000, readyBefore + 1), runtime.log.slice(-3000));
  for (const name of ['sql', 'chat']) {
    // The API servers reload the adapters on the new process once it is ready: poll until it has.
    const served = await waitUntil(async () => {
      try {
        return await rankText(name, 1) === want[name];
      } catch (e) {
        if (e.status === 404 || e.status === 503) return false;
        throw e;
      }
    }, 30_000, 100);
    assert.ok(served, `${name} on the restarted rank 1\n${runtime.log.slice(-3000)}`);
  }
  assert.deepEqual(await modelIds(runtime, auth), ['tiny', 'sql', 'chat']);
});

test('with tensor parallelism every worker loads and unloads the adapter', async () => {
  const post = (path, body) => send(tensorParallel, 'POST', path, body);
  let r = await post('/v1/load_lora_adapter', { lora_name: 'sql', lora_path: join(work, 'sql') });
  assert.equal(r.status, 200, r.text);
  const complete = async (name) => {
    const c = await send(tensorParallel, 'POST', '/v1/completions', params(name));
    assert.equal(c.status, 200, c.text);
    return JSON.parse(c.text).choices[0].text;
  };
  assert.equal(await complete('sql'), await refText('sql'));
  r = await post('/v1/load_lora_adapter', { lora_name: 'big', lora_path: join(work, 'big') });
  assert.equal(r.status, 400, r.text);
  r = await post('/v1/load_lora_adapter', { lora_name: 'ghost', lora_path: join(work, 'no-such-dir') });
  assert.equal(r.status, 404, r.text);
  assert.equal(await complete('sql'), await refText('sql'));
  r = await post('/v1/unload_lora_adapter', { lora_name: 'sql' });
  assert.equal(r.status, 200, r.text);
  const c = await send(tensorParallel, 'POST', '/v1/completions', params('sql'));
  assert.equal(c.status, 404, c.text);
  assert.equal(await complete('tiny'), await refText('tiny'));
});
