// Process supervision of `llmserve serve`, checked from outside through /proc:
// a worker or the frontend killed with SIGKILL must not leave a half-alive
// deployment or orphans behind.
//   - worker killed, --restart-policy never: the frontend answers 503 (health
//     and completions), the launcher exits non-zero, every process is gone;
//   - worker killed, --restart-policy on-failure: the engine (with fresh
//     workers) is restarted and serving resumes; SIGTERM then stops all (exit 0);
//   - frontend killed: engines and workers exit, the launcher exits non-zero;
//   - frontend killed, --restart-policy on-failure: a new frontend serves with
//     the same engines, which stop the request its predecessor left running.
//   node --test tests/e2e/supervision.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTinyModel, freePort, startServe, waitHealthy, waitExit, stopServe, recordTree, waitGone, waitUntil }
  from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-supervision-'));
const modelDir = join(work, 'tiny');

before(() => makeTinyModel(modelDir, 3));
after(() => rmSync(work, { recursive: true, force: true }));

const tp2 = ['--tensor-parallel-size', '2', '--max-num-seqs', '16'];

async function complete(server, maxTokens = 4) {
  try {
    const r = await fetch(`http://127.0.0.1:${server.port}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', prompt: 'Hello', max_tokens: maxTokens, temperature: 0, ignore_eos: true }),
      signal: AbortSignal.timeout(20_000),
    });
    return { status: r.status, body: await r.text() };
  } catch (e) {
    return { status: 0, body: String(e) };  // connection refused or reset
  }
}

async function health(server) {
  try {
    return (await fetch(`http://127.0.0.1:${server.port}/health`, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

// The tree of a started deployment: launcher's children and grandchildren by name.
function roles(server) {
  const tree = recordTree(server);
  const named = (prefix) => tree.filter((p) => p.comm.startsWith(prefix)).map((p) => p.pid);
  return { all: tree.map((p) => p.pid), frontends: named('llmserve-fron'), engines: named('llmserve-engi'),
           workers: named('llmserve-work') };
}

test('kill -9 a worker, restart-policy never: 503, launcher exits non-zero, nothing left', async () => {
  const server = startServe(modelDir, await freePort(), [...tp2, '--restart-policy', 'never']);
  try {
    await waitHealthy(server);
    assert.equal((await complete(server)).status, 200);
    const p = roles(server);
    assert.equal(p.frontends.length, 1, JSON.stringify(p));
    assert.equal(p.engines.length, 1, JSON.stringify(p));
    assert.equal(p.workers.length, 2, JSON.stringify(p));
    process.kill(p.workers[1], 'SIGKILL');
    // Health turns 503 (the deployment then stops, so 0 = refused also ends the wait).
    const h = await waitUntil(async () => {
      const code = await health(server);
      return code === 503 || code === 0 ? code : null;
    }, 15_000, 50);
    const seen503 = h === 503;
    const completion = seen503 ? await complete(server) : null;
    assert.ok(seen503, `health never answered 503 after the worker died\n${server.log}`);
    assert.equal(completion.status, 503, `completion while the engine is dead: ${completion.body}`);
    const exit = await waitExit(server, 30_000);
    assert.ok(exit, `launcher still running 30 s after a worker died\n${server.log}`);
    assert.notEqual(exit.code, 0, 'launcher exit code');
    assert.deepEqual(await waitGone(p.all, 5_000), [], 'processes left behind');
  } finally {
    await stopServe(server, 5_000);
  }
});

test('kill -9 a worker, restart-policy on-failure: the engine restarts and serving resumes', async () => {
  const server = startServe(modelDir, await freePort(), [...tp2, '--restart-policy', 'on-failure']);
  try {
    await waitHealthy(server);
    const before = roles(server);
    process.kill(before.workers[0], 'SIGKILL');
    // A request may fail while the engine dies; within a bounded time one succeeds again.
    const ok = await waitUntil(async () => {
      const r = await complete(server);
      assert.ok(server.proc.exitCode === null, `launcher exited\n${server.log}`);
      return r.status === 200;
    }, 60_000, 200);
    assert.ok(ok, `no completion succeeded after the restart\n${server.log}`);
    const after = roles(server);
    assert.equal(after.engines.length, 1);
    assert.notDeepEqual(after.engines, before.engines, 'the engine was replaced');
    assert.equal(after.workers.length, 2);
    assert.deepEqual(after.frontends, before.frontends, 'the frontend kept running');
    assert.equal(await health(server), 200);
    const exit = await stopServe(server, 30_000);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
    assert.deepEqual(await waitGone([...before.all, ...after.all], 5_000), [], 'processes left behind');
  } finally {
    await stopServe(server, 5_000);
  }
});

test('kill -9 the frontend: engines and workers exit, launcher exits non-zero', async () => {
  const server = startServe(modelDir, await freePort(), [...tp2, '--restart-policy', 'never']);
  try {
    await waitHealthy(server);
    const p = roles(server);
    process.kill(p.frontends[0], 'SIGKILL');
    const exit = await waitExit(server, 30_000);
    assert.ok(exit, `launcher still running 30 s after the frontend died\n${server.log}`);
    assert.notEqual(exit.code, 0, 'launcher exit code');
    assert.deepEqual(await waitGone(p.all, 5_000), [], 'processes left behind');
  } finally {
    await stopServe(server, 5_000);
  }
});

// The engine's running-request gauge as /metrics reports it (null before any report).
async function runningRequests(server) {
  try {
    const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    const m = text.match(/^vllm:num_requests_running\{[^}]*\} (\S+)$/m);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

test('kill -9 the frontend, restart-policy on-failure: a new frontend serves with the same engines', async () => {
  const server = startServe(modelDir, await freePort(),
                            [...tp2, '--restart-policy', 'on-failure', '--max-model-len', '4096']);
  try {
    await waitHealthy(server);
    const before = roles(server);
    // A long request the dead frontend leaves behind in the engine.
    const orphan = fetch(`http://127.0.0.1:${server.port}/v1/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', prompt: 'a long one', max_tokens: 4000, temperature: 0,
                             ignore_eos: true, stream: true }),
    }).then(async (r) => { for await (const _ of r.body); }).catch(() => {});
    assert.ok(await waitUntil(async () => (await runningRequests(server)) === 1, 10_000),
              'the long request never ran');
    process.kill(before.frontends[0], 'SIGKILL');
    await orphan;
    const ok = await waitUntil(async () => {
      const served = (await complete(server)).status === 200;
      assert.ok(server.proc.exitCode === null, `launcher exited\n${server.log}`);
      return served;
    }, 30_000, 100);
    assert.ok(ok, `no completion succeeded after the frontend restart\n${server.log}`);
    const after = roles(server);
    assert.equal(after.frontends.length, 1);
    assert.notDeepEqual(after.frontends, before.frontends, 'the frontend was replaced');
    assert.deepEqual(after.engines, before.engines, 'the engine kept running');
    assert.deepEqual(after.workers, before.workers, 'the workers kept running');
    // The request of the dead frontend is aborted in the engine, not run to its 4000 tokens.
    let running = null;
    await waitUntil(async () => {
      await complete(server, 1);  // a step, so the engine reports its load
      running = await runningRequests(server);
      return running === 0;
    }, 5_000, 50);
    assert.equal(running, 0, `the orphaned request still runs\n${server.log.slice(-3000)}`);
    const exit = await stopServe(server, 30_000);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
    assert.deepEqual(await waitGone([...before.all, ...after.all], 5_000), [], 'processes left behind');
  } finally {
    await stopServe(server, 5_000);
  }
});
