#!/usr/bin/env node
// Data-parallel scaling on this machine: output tokens/s of `llmserve serve`
// with --data-parallel-size 1 on one core (taskset -c 0) and with
// --data-parallel-size 2 on two cores (taskset -c 0,1: one core per rank; each
// engine takes an equal share of the cores it may run on). Same tiny
// random-weight Qwen3, same requests (greedy, ignore_eos, fixed lengths), same
// concurrency. The frontend and coordinator share those cores. Prints one JSON
// line per run and the ratio.
//   node scripts/bench_dp_throughput.mjs [--requests 96] [--concurrency 32] [--max-tokens 64] [--bin build/bin]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { waitUntil } from '../tests/e2e/serve_harness.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const bin = args.bin ?? process.env.LLMSERVE_BIN ?? 'build/bin';
const requests = Number(args.requests ?? 96);
const concurrency = Number(args.concurrency ?? 32);
const maxTokens = Number(args['max-tokens'] ?? 64);
const work = mkdtempSync(join(tmpdir(), 'llmserve-dpbench-'));
const modelDir = join(work, 'tiny');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
    s.on('error', reject);
  });
}

async function run(dp, cores) {
  const port = await freePort();
  let log = '';
  const server = spawn('taskset', ['-c', cores, join(bin, 'llmserve'), 'serve', modelDir, '--host', '127.0.0.1',
                                   '--port', String(port), '--served-model-name', 'tiny', '--data-parallel-size', String(dp),
                                   '--max-model-len', '1024', '--kv-cache-memory', '256M', '--dtype', 'float32'],
                       { stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout.on('data', (d) => { log += d; });
  server.stderr.on('data', (d) => { log += d; });
  const healthy = await waitUntil(async () => {
    if (server.exitCode !== null) throw new Error(`server exited:\n${log}`);
    try { return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200; } catch { return false; }
  }, 120_000, 200);
  if (!healthy) throw new Error(`server not healthy:\n${log}`);
  const one = async (i) => {
    const prompt = Array.from({ length: 48 }, (_, k) => `w${(i * 13 + k) % 97}`).join(' ');
    const r = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true }),
    });
    const j = await r.json();
    if (r.status !== 200) throw new Error(JSON.stringify(j));
    return j.usage.completion_tokens;
  };
  await Promise.all([0, 1, 2, 3].map((i) => one(1000 + i)));  // warm-up
  let next = 0;
  let tokens = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < requests) {
      const n = await one(next++);
      tokens += n;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  const exited = new Promise((r) => server.on('exit', r));
  server.kill('SIGTERM');
  await exited;
  const result = { data_parallel_size: dp, cores, requests, concurrency, output_tokens: tokens, seconds: +seconds.toFixed(3),
                   output_tokens_per_s: +(tokens / seconds).toFixed(1) };
  console.log(JSON.stringify(result));
  return result;
}

try {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--out', modelDir, '--seed', '7'],
               { stdio: 'ignore' });
  const one = await run(1, '0');
  const two = await run(2, '0,1');
  console.log(JSON.stringify({ dp2_over_dp1_throughput: +(two.output_tokens_per_s / one.output_tokens_per_s).toFixed(3) }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
