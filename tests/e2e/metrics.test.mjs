// End-to-end: GET /metrics of `llmserve serve` (tiny random-weight Qwen3 on
// 127.0.0.1) parsed as Prometheus text by a strict reader (prometheus_text.mjs), and
// its values moved by known requests sent with the official `openai` client.
// Run by ctest:  node --test tests/e2e/metrics.test.mjs   (LLMSERVE_BIN = the build's bin/)
// The tests run one after another against an otherwise idle server, so every
// delta between two scrapes is caused by the request in between.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, waitUntil, waitForLog, logCount } from './serve_harness.mjs';
import { parsePrometheus, value } from './prometheus_text.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-metrics-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let client;

async function scrape() {
  const r = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await r.text());
}

// Every counter sample in `after` is >= the same sample in `before`.
function assertCountersGrew(before, after) {
  for (const [name, f] of before) {
    const later = after.get(name);
    assert.ok(later, `${name} disappeared`);
    const grows = f.type === 'counter' || f.type === 'histogram';
    if (!grows) continue;
    for (const s of f.samples) {
      if (f.type === 'histogram' && s.name.endsWith('_sum')) continue;  // a sum of latencies only grows too, but skip float noise
      const t = later.samples.find((x) => x.name === s.name && JSON.stringify(x.labels) === JSON.stringify(s.labels));
      assert.ok(t, `${s.name} ${JSON.stringify(s.labels)} disappeared`);
      assert.ok(t.value >= s.value, `${s.name} ${JSON.stringify(s.labels)} went down: ${s.value} -> ${t.value}`);
    }
  }
}

const E0 = { model_name: 'tiny', engine: '0' };
const delta = (a, b, name, match = E0) => value(b, name, match) - value(a, name, match);

before(async () => {
  makeTinyModel(modelDir, 7);
  port = await freePort();
  server = startServe(modelDir, port, ['--max-num-seqs', '16', '--api-key', 'sekrit', '--log-stats-interval', '0.5']);
  await waitHealthy(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'sekrit', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

test('/metrics needs no API key and exposes the vLLM families at zero', async () => {
  const families = await scrape();  // no Authorization header: /metrics is not behind --api-key
  const types = {
    'vllm:num_requests_running': 'gauge', 'vllm:num_requests_waiting': 'gauge', 'vllm:kv_cache_usage_perc': 'gauge',
    'vllm:prompt_tokens_total': 'counter', 'vllm:generation_tokens_total': 'counter',
    'vllm:request_success_total': 'counter', 'vllm:num_preemptions_total': 'counter',
    'vllm:prefix_cache_queries_total': 'counter', 'vllm:prefix_cache_hits_total': 'counter',
    'vllm:time_to_first_token_seconds': 'histogram', 'vllm:inter_token_latency_seconds': 'histogram',
    'vllm:e2e_request_latency_seconds': 'histogram', 'vllm:request_queue_time_seconds': 'histogram',
    'vllm:request_prefill_time_seconds': 'histogram', 'vllm:request_decode_time_seconds': 'histogram',
    'vllm:iteration_tokens_total': 'histogram',
  };
  for (const [name, type] of Object.entries(types)) assert.equal(families.get(name)?.type, type, name);
  for (const reason of ['stop', 'length', 'abort', 'error'])
    assert.equal(value(families, 'vllm:request_success_total', { ...E0, finished_reason: reason }), 0);
  assert.equal(value(families, 'vllm:generation_tokens_total'), 0);
  const guarded = await fetch(`http://127.0.0.1:${port}/v1/models`);
  assert.equal(guarded.status, 401);
});

test('cache_config_info labels are vLLM\'s CacheConfig fields, valued from the engine', async () => {
  const families = await scrape();
  assert.equal(families.get('vllm:cache_config_info')?.type, 'gauge');
  const samples = families.get('vllm:cache_config_info').samples;
  assert.equal(samples.length, 1, 'one engine, one series');
  assert.equal(samples[0].value, 1);
  // The frontend logs what the engine's ReadyResponse said.
  const blocks = /engine rank 0 ready: (\d+) KV blocks/.exec(server.log)?.[1];
  assert.ok(blocks, server.log.slice(-2000));
  assert.deepEqual(samples[0].labels, {
    block_size: '32', gpu_memory_utilization: '0.9', swap_space: '4', cache_dtype: 'auto',
    is_attention_free: 'False', num_gpu_blocks_override: 'None', sliding_window: 'None',
    enable_prefix_caching: 'True', prefix_caching_hash_algo: 'sha256', cpu_offload_gb: '0',
    calculate_kv_scales: 'False', cpu_kvcache_space_bytes: 'None', mamba_page_size_padded: 'None',
    mamba_block_size: 'None', mamba_cache_dtype: 'auto', mamba_ssm_cache_dtype: 'auto', num_gpu_blocks: blocks,
    num_cpu_blocks: 'None', kv_sharing_fast_prefill: 'False', kv_cache_memory_bytes: String(64 * 1024 * 1024),
    engine: '0',
  });
});

test('one completion moves every family by the expected amount', async () => {
  const a = await scrape();
  const r = await client.completions.create({ model: 'tiny', prompt: 'The capital of France is', max_tokens: 5,
                                              temperature: 0, ignore_eos: true });
  assert.equal(r.choices[0].finish_reason, 'length');
  assert.equal(r.usage.completion_tokens, 5);
  const prompt = r.usage.prompt_tokens;
  assert.ok(prompt > 0);
  const b = await scrape();
  assertCountersGrew(a, b);
  assert.equal(delta(a, b, 'vllm:generation_tokens_total'), 5);
  assert.equal(delta(a, b, 'vllm:prompt_tokens_total'), prompt);
  assert.equal(delta(a, b, 'vllm:request_success_total', { ...E0, finished_reason: 'length' }), 1);
  assert.equal(delta(a, b, 'vllm:request_success_total', { ...E0, finished_reason: 'stop' }), 0);
  for (const h of ['time_to_first_token_seconds', 'e2e_request_latency_seconds', 'request_queue_time_seconds',
                   'request_prefill_time_seconds', 'request_decode_time_seconds', 'request_inference_time_seconds'])
    assert.equal(delta(a, b, `vllm:${h}_count`), 1, h);
  // Per-request token counts and parameters (families that appear with the first finished request).
  const before = (name) => { try { return value(a, name, E0); } catch { return 0; } };
  const grew = (name) => value(b, name, E0) - before(name);
  assert.equal(grew('vllm:request_prompt_tokens_sum'), prompt);
  assert.equal(grew('vllm:request_generation_tokens_sum'), 5);
  assert.equal(grew('vllm:request_params_max_tokens_sum'), 5);
  assert.equal(grew('vllm:request_params_n_count'), 1);
  // The HTTP request itself (prometheus-fastapi-instrumentator's families in vLLM).
  const route = { handler: '/v1/completions', method: 'POST', status: '2xx' };
  assert.equal(value(b, 'http_requests_total', route) - (() => { try { return value(a, 'http_requests_total', route); } catch { return 0; } })(), 1);
  // One output per step after the first token: 4 gaps between 5 tokens.
  assert.equal(delta(a, b, 'vllm:inter_token_latency_seconds_count'), 4);
  // Engine steps: the prefill (all prompt tokens) and 4 decode steps of 1 token.
  assert.equal(delta(a, b, 'vllm:iteration_tokens_total_count'), 5);
  assert.equal(delta(a, b, 'vllm:iteration_tokens_total_sum'), prompt + 4);
  assert.equal(delta(a, b, 'vllm:prefix_cache_queries_total'), prompt);
  // Phases are engine-clock differences, TTFT/E2E frontend-clock: all positive, and the
  // request's phases fit inside its end-to-end latency.
  const ttft = delta(a, b, 'vllm:time_to_first_token_seconds_sum');
  const e2e = delta(a, b, 'vllm:e2e_request_latency_seconds_sum');
  const queue = delta(a, b, 'vllm:request_queue_time_seconds_sum');
  const prefill = delta(a, b, 'vllm:request_prefill_time_seconds_sum');
  const decode = delta(a, b, 'vllm:request_decode_time_seconds_sum');
  for (const v of [ttft, e2e, prefill, decode]) assert.ok(v > 0 && v < 60, String(v));
  assert.ok(queue >= 0 && queue < 60);
  assert.ok(ttft <= e2e, `ttft ${ttft} <= e2e ${e2e}`);
  assert.ok(queue + prefill + decode <= e2e + 1e-3, `phases ${queue + prefill + decode} within e2e ${e2e}`);
  // The engine is idle again, and its last stats (sent with the final output) say so.
  assert.equal(value(b, 'vllm:num_requests_running', E0), 0);
  assert.equal(value(b, 'vllm:num_requests_waiting', E0), 0);
  const kv = value(b, 'vllm:kv_cache_usage_perc', E0);
  assert.ok(kv >= 0 && kv <= 1);
});

test('the same prompt again hits the prefix cache', async () => {
  // Longer than one KV block (128 tokens on CPU) so that full blocks get cached.
  const prompt = 'Once upon a time, in a land far away, there lived a king who had three daughters and a very old dog. '
      .repeat(12);
  const a = await scrape();
  const first = await client.completions.create({ model: 'tiny', prompt, max_tokens: 2, temperature: 0, ignore_eos: true });
  const b = await scrape();
  await client.completions.create({ model: 'tiny', prompt, max_tokens: 2, temperature: 0, ignore_eos: true });
  const c = await scrape();
  assertCountersGrew(a, b);
  assertCountersGrew(b, c);
  const n = first.usage.prompt_tokens;
  assert.ok(n > 128 && n < 500, `prompt tokens ${n}`);
  assert.equal(delta(b, c, 'vllm:prefix_cache_queries_total'), n);
  const hits = delta(b, c, 'vllm:prefix_cache_hits_total');
  // Full blocks of the prompt are cached, the last token is always recomputed.
  assert.ok(hits > 0 && hits < n, `hits ${hits} of ${n}`);
});

test('a stop string finishes as stop, a client abort as abort', async () => {
  const probe = await client.completions.create({ model: 'tiny', prompt: 'Hello there', max_tokens: 6, temperature: 0,
                                                  ignore_eos: true });
  const word = probe.choices[0].text.trim().split(/\s+/)[0];
  assert.ok(word.length > 0, `greedy text '${probe.choices[0].text}'`);
  const a = await scrape();
  const r = await client.completions.create({ model: 'tiny', prompt: 'Hello there', max_tokens: 6, temperature: 0,
                                              ignore_eos: true, stop: [word] });
  assert.equal(r.choices[0].finish_reason, 'stop');
  const b = await scrape();
  assert.equal(delta(a, b, 'vllm:request_success_total', { ...E0, finished_reason: 'stop' }), 1);
  assert.equal(delta(a, b, 'vllm:request_success_total', { ...E0, finished_reason: 'length' }), 0);

  const controller = new AbortController();
  const s = await client.completions.create({ model: 'tiny', prompt: 'Hello there', max_tokens: 400, temperature: 0,
                                              ignore_eos: true, stream: true }, { signal: controller.signal });
  let seen = 0;
  let abortedAt = 0;
  try {
    for await (const chunk of s) {
      seen += chunk.choices.length;
      if (seen >= 2 && !abortedAt) {
        abortedAt = Date.now();
        controller.abort();
      }
    }
  } catch (e) {
    assert.ok(/abort/i.test(String(e.name) + String(e.message)));
  }
  // The idle engine reports itself: the running gauge is 0 within 1 s of the abort.
  const idle = await waitUntil(async () => value(await scrape(), 'vllm:num_requests_running', E0) === 0,
                               Math.max(0, abortedAt + 1_000 - Date.now()), 50);
  assert.ok(idle, 'vllm:num_requests_running is still above 0 one second after the abort');
  // The server notices the disconnect on its own time: poll (bounded).
  let c;
  await waitUntil(async () => {
    c = await scrape();
    return delta(b, c, 'vllm:request_success_total', { ...E0, finished_reason: 'abort' }) >= 1;
  }, 5_000, 100);
  assertCountersGrew(b, c);
  assert.equal(delta(b, c, 'vllm:request_success_total', { ...E0, finished_reason: 'abort' }), 1);
  const generated = delta(b, c, 'vllm:generation_tokens_total');
  assert.ok(generated >= 2 && generated < 400, `generated ${generated}`);
});

test('the periodic stats line reports the generation throughput in vLLM\'s format', async () => {
  const line = /Engine 000: Avg prompt throughput: [\d.]+ tokens\/s, Avg generation throughput: ([\d.]+) tokens\/s, Running: \d+ reqs, Waiting: \d+ reqs, GPU KV cache usage: [\d.]+%, Prefix cache hit rate: [\d.]+%/g;
  const before = logCount(server, line);
  await client.completions.create({ model: 'tiny', prompt: 'Stats line', max_tokens: 16, temperature: 0, ignore_eos: true });
  // The next lines cover the interval with the 16 tokens: one reports a non-zero generation throughput.
  assert.ok(await waitForLog(server, / Avg generation throughput: (?!0\.0 )[\d.]+ tokens\/s/, 5_000,
                             logCount(server, / Avg generation throughput: (?!0\.0 )[\d.]+ tokens\/s/) + 1),
            `no stats line with generation throughput:\n${server.log.slice(-3000)}`);
  assert.ok(logCount(server, line) > before);
});
