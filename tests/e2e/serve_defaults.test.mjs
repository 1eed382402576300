// End-to-end: `llmserve serve` with no model and no sizing flags (only
// --host/--port) serves the demo model quickly and small, and a 4-rank
// data-parallel deployment split into two "nodes" on this host, also
// without memory flags, becomes healthy and serves on every rank: the
// default KV cache is what the scheduler can use, and the engines sharing a
// runtime directory split the host's memory.
// Run by ctest (alone: it times the start):
//   node --test tests/e2e/serve_defaults.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePortRange, startLauncher, waitHealthy, stopServe, processTree } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-defaults-'));
const servers = [];

after(async () => {
  for (const s of servers) await stopServe(s);
  rmSync(work, { recursive: true, force: true });
});

// A fresh model cache and runtime directory, as on a new host.
function freshHost(name) {
  const env = { XDG_CACHE_HOME: join(work, name, 'cache'), LLMSERVE_RUNTIME_DIR: join(work, name, 'run') };
  mkdirSync(env.LLMSERVE_RUNTIME_DIR, { recursive: true });
  return env;
}

// Resident memory of the launcher and every process under it, in bytes.
function treeRss(server) {
  let kib = 0;
  for (const pid of [server.proc.pid, ...processTree(server.proc.pid).map((p) => p.pid)]) {
    try {
      const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch {}  // exited while we read
  }
  return kib * 1024;
}

async function complete(port, headers = {}) {
  const r = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'demo-qwen3-tiny', prompt: 'Hello', max_tokens: 4 }),
  });
  return { status: r.status, rank: r.headers.get('x-data-parallel-rank'), body: await r.text() };
}

test('the demo with no flags is healthy in under 5 s with under 1 GiB resident', async () => {
  const port = await freePort();
  const start = Date.now();
  const server = startLauncher(port, [], freshHost('demo'));
  servers.push(server);
  await waitHealthy(server, 30_000);
  const seconds = (Date.now() - start) / 1000;
  const rss = treeRss(server);
  console.log(`demo: healthy after ${seconds.toFixed(2)} s (model generated), ${(rss / 2 ** 20).toFixed(0)} MiB resident`);
  assert.ok(seconds < 5, `healthy after ${seconds} s:\n${server.log}`);
  assert.ok(rss < 2 ** 30, `${rss} bytes resident`);
  // The log says how big the KV cache is and why.
  assert.match(server.log, /KV cache: \d+ blocks, what max_num_seqs requests of max_model_len 4096 tokens can use/);
  const r = await complete(port);
  assert.equal(r.status, 200, r.body);
  assert.ok(treeRss(server) < 2 ** 30, 'still under 1 GiB after a request');
  await stopServe(server);
});

test('a 4-rank deployment split into two nodes on one host is healthy without memory flags', async () => {
  const env = freshHost('dp');
  const rpc = await freePortRange(8);
  const dp = ['--data-parallel-size', '4', '--data-parallel-size-local', '2',
              '--data-parallel-address', '127.0.0.1', '--data-parallel-rpc-port', String(rpc)];
  const port = await freePort();
  const head = startLauncher(port, dp, env);
  const node = startLauncher(await freePort(), ['--headless', '--data-parallel-start-rank', '2', ...dp], env);
  servers.push(head, node);
  await waitHealthy(head, 120_000);
  for (let rank = 0; rank < 4; ++rank) {
    const r = await complete(port, { 'x-data-parallel-rank': String(rank) });
    assert.equal(r.status, 200, `rank ${rank}: ${r.body}\n${head.log.slice(-4000)}\n${node.log.slice(-4000)}`);
    assert.equal(r.rank, String(rank));
  }
  const rss = treeRss(head) + treeRss(node);
  console.log(`4 ranks on two nodes: ${(rss / 2 ** 20).toFixed(0)} MiB resident`);
  assert.ok(rss < 4 * 2 ** 30, `${rss} bytes resident`);
});
