// End-to-end: elastic data-parallel scaling under a steady streaming load
// (`llmserve serve --data-parallel-size 2 --admin-api-key K`), with the
// official `openai` client. Scale 2 -> 4: ranks 2 and 3 take requests within
// a few seconds; /is_scaling_elastic_ep is true during the scale and false
// after; /health answers 200 throughout. Scale 4 -> 2: the engines of ranks 2
// and 3 exit, the load goes on. No request fails. A drain that times out
// answers 408, still removes the rank, and its request still finishes. Also: 400 for bad bodies,
// 401 for a wrong key, 409 for a second scale at once, 403 without an admin key.
// A headless node (TCP on 127.0.0.1) started before a scale waits to be
// admitted by the scale-up; the scale-down drains its engines, which exit 0,
// and its launcher exits 0.
//   node --test tests/e2e/elastic_scale.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, freePortRange, startServe, waitHealthy, waitExit, stopServe, processTree, waitGone,
         sleep, waitUntil, waitForLog, e2eDevice } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-elastic-'));
const servers = [];

before(() => makeTinyModel(join(work, 'tiny'), 11));

after(async () => {
  for (const s of servers) await stopServe(s);
  rmSync(work, { recursive: true, force: true });
});

// Pids of the engine processes serving `rank` (by their --data-parallel-rank flag).
function enginePids(server, rank) {
  const pids = [];
  for (const p of processTree(server.proc.pid)) {
    if (!p.comm.startsWith('llmserve-engine')) continue;
    try {
      const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0');
      if (argv.includes(`--data-parallel-rank=${rank}`)) pids.push(p.pid);
    } catch {}
  }
  return pids;
}

async function scale(port, body, key = 'K') {
  const headers = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const r = await fetch(`http://127.0.0.1:${port}/scale_elastic_ep`, {
    method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

async function isScaling(port, method = 'GET') {
  const r = await fetch(`http://127.0.0.1:${port}/is_scaling_elastic_ep`, { method });
  assert.equal(r.status, 200);
  return (await r.json()).is_scaling_elastic_ep;
}

const longTokens = e2eDevice === 'cuda' ? 15000 : 1500;

test('scale 2 -> 4 -> 2 under a steady streaming load: no request fails, new ranks serve at once', async () => {
  const port = await freePort();
  // (A long max-model-len: the drain that times out below needs a request
  // that outlasts its 1 s. 1,500 tokens take seconds on a CPU, but a GPU
  // decodes the tiny model at about a token per millisecond.)
  const server = startServe(join(work, 'tiny'), port, ['--data-parallel-size', '2', '--admin-api-key', 'K',
                                                       '--max-model-len', String(longTokens + 548)]);
  servers.push(server);
  await waitHealthy(server);
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });

  // Refusals first: nothing is scaling yet.
  assert.equal((await scale(port, { new_data_parallel_size: 4 }, 'wrong')).status, 401);
  assert.equal((await scale(port, { new_data_parallel_size: 4 }, null)).status, 401);
  for (const bad of ['{}', '{"new_data_parallel_size": 0}', '{"new_data_parallel_size": "4"}',
                     '{"new_data_parallel_size": 2.5}', '{"new_data_parallel_size": 4, "drain_timeout": 0}',
                     '{"new_data_parallel_size": 4, "extra": 1}', 'not json']) {
    const r = await scale(port, bad);
    assert.equal(r.status, 400, `${bad} -> ${JSON.stringify(r)}`);
    assert.ok(r.body.error.message.length > 0);
  }
  assert.equal(await isScaling(port, 'POST'), false);

  // The steady load: 8 clients streaming short completions back to back.
  const served = [];   // {rank, at}
  const failures = [];
  let running = true;
  const worker = async (i) => {
    for (let n = 0; running; ++n) {
      try {
        const { data: stream, response } = await client.completions.create(
          { model: 'tiny', prompt: `client ${i} request ${n}`, max_tokens: 12, temperature: 0, ignore_eos: true,
            stream: true }).withResponse();
        let chunks = 0;
        for await (const part of stream) chunks += part.choices?.length ? 1 : 0;
        if (chunks === 0) throw new Error('no tokens streamed');
        served.push({ rank: response.headers.get('x-data-parallel-rank'), at: Date.now() });
      } catch (e) {
        failures.push(String(e));
      }
    }
  };
  // Health and the scaling flag, polled throughout.
  const healthCodes = new Map();
  let sawScaling = false;
  const poller = (async () => {
    while (running) {
      const h = await fetch(`http://127.0.0.1:${port}/health`);
      healthCodes.set(h.status, (healthCodes.get(h.status) ?? 0) + 1);
      await h.arrayBuffer();
      if (await isScaling(port)) sawScaling = true;
      await sleep(10);  // paces the observer; not synchronisation
    }
  })();
  const workers = Array.from({ length: 8 }, (_, i) => worker(i));
  assert.ok(await waitUntil(() => served.length >= 8, 30_000), 'the load is flowing before the scale');

  // 2 -> 4.
  const up = await scale(port, { new_data_parallel_size: 4 });
  const joined = Date.now();
  assert.deepEqual(up, { status: 200, body: { message: 'Scaled to 4 data parallel engines' } });
  assert.equal(await isScaling(port), false, 'not scaling once the scale answered');
  assert.ok(sawScaling, '/is_scaling_elastic_ep was true during the scale');
  for (const rank of ['2', '3']) {
    assert.ok(await waitUntil(() => served.some((s) => s.rank === rank && s.at >= joined), joined + 5_000 - Date.now()),
              `rank ${rank} served nothing within 5 s of joining: ${JSON.stringify(served.slice(-20))}`);
    console.log(`rank ${rank} served its first request ${served.find((s) => s.rank === rank).at - joined} ms after the scale answered`);
  }
  assert.equal(enginePids(server, 2).length, 1);
  assert.equal(enginePids(server, 3).length, 1);
  // Let the new ranks carry some of the load, so the scale-down has requests to drain.
  const servedBy = (rank) => served.filter((s) => s.rank === rank && s.at >= joined).length;
  assert.ok(await waitUntil(() => servedBy('2') >= 3 && servedBy('3') >= 3, 30_000), 'ranks 2 and 3 carry load');

  // 4 -> 2, with a second scale sent at the same time: one runs, the other gets 409.
  sawScaling = false;
  const removed = [...enginePids(server, 2), ...enginePids(server, 3)];
  const scalingDown = scale(port, { new_data_parallel_size: 2, drain_timeout: 30 });
  assert.ok(await waitUntil(() => isScaling(port), 10_000), 'the scale-down is running');
  const second = await scale(port, { new_data_parallel_size: 3 });
  const down = await scalingDown;
  const shrunk = Date.now();
  assert.deepEqual(down, { status: 200, body: { message: 'Scaled to 2 data parallel engines' } });
  assert.equal(second.status, 409, JSON.stringify(second));
  assert.match(second.body.error.message, /Another scale is in progress/);
  assert.ok(sawScaling, '/is_scaling_elastic_ep was true during the scale-down');
  assert.equal(await isScaling(port), false);
  assert.deepEqual(await waitGone(removed, 10_000), [], 'the engines of ranks 2 and 3 exited');
  assert.deepEqual([...enginePids(server, 2), ...enginePids(server, 3)], [], 'no engine of rank 2 or 3 remains');
  const countAfter = served.length;
  // Requests that were already on ranks 2 and 3 may finish up to 500 ms late.
  const servedLate = () => served.filter((s) => s.at > shrunk + 500).length;
  assert.ok(await waitUntil(() => servedLate() >= 8, 30_000), 'the load went on after the scale-down');
  running = false;
  await Promise.all([...workers, poller]);

  assert.deepEqual(failures, [], 'no request failed');
  assert.ok(served.length > countAfter, 'the load went on after the scale-down');
  const lateRanks = new Set(served.filter((s) => s.at > shrunk + 500).map((s) => s.rank));
  assert.ok(!lateRanks.has('2') && !lateRanks.has('3'), `only ranks 0 and 1 serve after the scale-down: ${[...lateRanks]}`);
  assert.deepEqual([...healthCodes.keys()], [200], `/health answered 200 throughout: ${JSON.stringify([...healthCodes])}`);
  const byRank = {};
  for (const s of served) byRank[s.rank] = (byRank[s.rank] ?? 0) + 1;
  console.log(`served ${served.length} requests: ${JSON.stringify(byRank)}`);
  assert.ok(server.proc.exitCode === null, 'the launcher still runs');

  // A drain that times out: 408, the scale still completes, and the request the
  // removed rank holds still finishes (the engine drains it after SIGTERM).
  assert.equal((await scale(port, { new_data_parallel_size: 3 })).status, 200);
  const { data: long, response } = await client.completions.create(
    { model: 'tiny', prompt: 'a long one', max_tokens: longTokens, temperature: 0, ignore_eos: true, stream: true },
    { headers: { 'X-data-parallel-rank': '2' } }).withResponse();
  assert.equal(response.headers.get('x-data-parallel-rank'), '2');
  let tokens = 0;
  let finish = null;
  const reading = (async () => {
    for await (const part of long) {
      tokens += part.choices?.length ? 1 : 0;
      finish = part.choices?.[0]?.finish_reason ?? finish;
    }
  })();
  assert.ok(await waitUntil(() => tokens >= 3, 30_000), 'the long request streams');
  const timedOut = await scale(port, { new_data_parallel_size: 2, drain_timeout: 1 });
  assert.equal(timedOut.status, 408, JSON.stringify(timedOut));
  assert.match(timedOut.body.error.message, /Scaled to 2 data parallel engines, but ranks 2 did not finish/);
  await reading;
  assert.equal(finish, 'length', 'the request on the removed rank finished');
  assert.equal(tokens, longTokens);
  assert.deepEqual(enginePids(server, 2), []);
});

test('without --admin-api-key scaling answers 403 and says how to enable it', async () => {
  const port = await freePort();
  const server = startServe(join(work, 'tiny'), port, []);
  servers.push(server);
  await waitHealthy(server);
  const r = await scale(port, { new_data_parallel_size: 2 });
  assert.equal(r.status, 403);
  assert.match(r.body.error.message, /--admin-api-key/);
  assert.equal(await isScaling(port), false);
});

test('a headless node waits for the scale-up, serves, and leaves cleanly on the scale-down', async () => {
  const port = await freePort();
  const rpc = await freePortRange(6);
  const common = ['--data-parallel-address', '127.0.0.1', '--data-parallel-rpc-port', String(rpc)];
  const head = startServe(join(work, 'tiny'), port, ['--data-parallel-size', '1', '--admin-api-key', 'K', ...common]);
  servers.push(head);
  await waitHealthy(head);
  const node = startServe(join(work, 'tiny'), await freePort(),
                          ['--headless', '--data-parallel-size', '2', '--data-parallel-start-rank', '1', ...common]);
  servers.push(node);
  // Its engine says HELLO and is held: rank 1 is not part of the deployment yet.
  assert.ok(await waitForLog(head, /engine rank 1 is not part of this deployment \(yet\)/, 20_000),
            `the head never saw rank 1's HELLO:\n${head.log}\n${node.log}`);
  const up = await scale(port, { new_data_parallel_size: 2 });
  assert.equal(up.status, 200, JSON.stringify(up));
  assert.match(head.log, /admitting the waiting remote engine rank 1/);
  const pinned = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-data-parallel-rank': '1' },
    body: JSON.stringify({ model: 'tiny', prompt: 'remote rank', max_tokens: 4 }),
  });
  assert.equal(pinned.status, 200, `${await pinned.text()}\n${head.log.slice(-6000)}\n${node.log.slice(-3000)}`);
  assert.equal(pinned.headers.get('x-data-parallel-rank'), '1');

  const down = await scale(port, { new_data_parallel_size: 1 });
  assert.equal(down.status, 200, JSON.stringify(down));
  const exit = await waitExit(node, 20_000);
  assert.deepEqual(exit, { code: 0, signal: null }, `the headless launcher exits 0:\n${node.log.slice(-2000)}`);
  assert.match(node.log, /engine1 left the deployment \(scaled down\)/);
  const r = await fetch(`http://127.0.0.1:${port}/health`);
  assert.equal(r.status, 200);
  assert.equal(await r.text(), '', 'not degraded: the removed rank is not missed');
});
