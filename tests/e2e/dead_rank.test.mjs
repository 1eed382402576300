// End-to-end: one data-parallel rank is killed with SIGKILL under streaming
// load (`llmserve serve --data-parallel-size 2 --restart-policy on-failure`).
// Requests on the other rank finish untouched; requests on the dead rank that
// had not streamed a token yet are moved to the live rank and succeed; the ones
// that were streaming end with a clear error; /health stays 200 while one rank
// serves and reports the deployment degraded; the launcher restarts the rank and it takes pinned requests again;
// an idle rank that dies is noticed through the coordinator without a request.
//   node --test tests/e2e/dead_rank.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, recordTree, waitUntil, waitForLog, logCount }
  from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-dead-rank-'));
let server;

after(async () => {
  if (server) await stopServe(server);
  rmSync(work, { recursive: true, force: true });
});

// The engine process of `rank` (by its --data-parallel-rank flag).
function enginePid(rank) {
  for (const p of recordTree(server)) {
    if (!p.comm.startsWith('llmserve-engine')) continue;
    try {
      const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0');
      if (argv.includes(`--data-parallel-rank=${rank}`)) return p.pid;
    } catch {}
  }
  return null;
}

// One streamed completion read as raw SSE: which rank served it, how many
// token chunks arrived, and how it ended ('done', 'error' or 'broken').
function stream(port, body, headers = {}) {
  const state = { rank: null, chunks: 0, end: null, finish: null, error: null };
  state.promise = (async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ ...body, stream: true }),
      });
      state.rank = r.headers.get('x-data-parallel-rank');
      if (r.status !== 200) {
        state.end = 'error';
        state.error = `HTTP ${r.status}: ${await r.text()}`;
        return;
      }
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const bytes of r.body) {
        buffer += decoder.decode(bytes, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, cut).replace(/^data: /, '');
          buffer = buffer.slice(cut + 2);
          if (event === '[DONE]') {
            state.end ??= 'done';
            continue;
          }
          const json = JSON.parse(event);
          if (json.error) {
            state.end = 'error';
            state.error = json.error.message;
          } else if (json.choices?.length) {
            state.chunks += 1;
            state.finish = json.choices[0].finish_reason ?? state.finish;
          }
        }
      }
      state.end ??= 'broken';
    } catch (e) {
      state.end = 'broken';
      state.error = String(e);
    }
  })();
  return state;
}

test('a SIGKILLed rank: others untouched, unstarted requests retried, the rank restarts and rejoins', async () => {
  makeTinyModel(join(work, 'tiny'), 5);
  const port = await freePort();
  server = startServe(join(work, 'tiny'), port,
                      ['--data-parallel-size', '2', '--restart-policy', 'on-failure', '--max-num-seqs', '64',
                       '--max-model-len', '4096']);
  await waitHealthy(server);
  const victim = enginePid(1);
  assert.ok(victim, 'found rank 1\'s engine process');

  const long = { model: 'tiny', max_tokens: 800, temperature: 0, ignore_eos: true };
  const before = Array.from({ length: 16 }, (_, i) => stream(port, { ...long, prompt: `story number ${i}` }));
  // Kill once rank 1 streams, so it has requests in flight.
  assert.ok(await waitUntil(() => before.some((s) => s.rank === '1' && s.chunks > 2), 30_000),
            'rank 1 never started streaming');
  const startedOnVictim = new Set(before.filter((s) => s.rank === '1' && s.chunks > 0));
  process.kill(victim, 'SIGKILL');
  // Sent before the frontend can know: some go to the dead rank and must be moved.
  const short = { model: 'tiny', max_tokens: 16, temperature: 0, ignore_eos: true };
  const afterKill = Array.from({ length: 12 }, (_, i) => stream(port, { ...short, prompt: `after the kill ${i}` }));
  // /health: still 200, and it names the dead rank until the restart is back.
  const degraded = await waitUntil(async () => {
    const r = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(r.status, 200, '/health stays 200 while rank 0 serves');
    const body = await r.text();
    return body ? JSON.parse(body) : null;
  }, 5_000);
  assert.deepEqual(degraded, { status: 'degraded', dead_data_parallel_ranks: [1] });
  await Promise.all([...before, ...afterKill].map((s) => s.promise));
  const healthLater = await fetch(`http://127.0.0.1:${port}/health`);

  for (const s of before) {
    if (startedOnVictim.has(s)) {
      assert.equal(s.end, 'error', `a stream that was running on the dead rank ends with an error: ${JSON.stringify(s)}`);
      assert.match(s.error, /engine rank 1 died/);
    } else if (s.rank === '0') {
      assert.equal(s.end, 'done', `rank 0's streams are untouched: ${JSON.stringify(s)}`);
      assert.equal(s.finish, 'length');
    }
  }
  assert.ok(before.some((s) => s.rank === '0'), 'rank 0 served some of the first streams');
  assert.ok(startedOnVictim.size > 0, 'some streams were running on rank 1 when it died');
  for (const s of afterKill) {
    assert.equal(s.end, 'done', `requests sent after the kill all succeed: ${JSON.stringify(s)}`);
    assert.equal(s.finish, 'length');
  }
  assert.equal(healthLater.status, 200);
  const moved = server.log.match(/engine rank 1 is dead: .*/);
  assert.ok(moved, 'the frontend logs the dead rank');
  console.log(moved[0]);

  // The launcher restarts rank 1; pinned requests reach it again.
  let pinned;
  const rejoined = await waitUntil(async () => {
    pinned = stream(port, { ...short, prompt: 'back again' }, { 'X-data-parallel-rank': '1' });
    await pinned.promise;
    return pinned.end === 'done';
  }, 60_000, 250);
  assert.ok(rejoined, `rank 1 did not come back: ${JSON.stringify(pinned)}\n${server.log.slice(-3000)}`);
  assert.equal(pinned.rank, '1');
  assert.notEqual(enginePid(1), victim, 'a new engine process serves rank 1');

  // An idle rank that dies is noticed without any request touching it: the
  // launcher tells the coordinator, whose next snapshot makes the frontends
  // check the rank.
  const deathsBefore = logCount(server, /engine rank 1 is dead/);
  process.kill(enginePid(1), 'SIGKILL');
  const killed = Date.now();
  assert.ok(await waitForLog(server, /engine rank 1 is dead/, 3_000, deathsBefore + 1),
            `the idle dead rank was not noticed within 3 s\n${server.log.slice(-2000)}`);
  console.log(`an idle rank killed with SIGKILL was out of routing ${Date.now() - killed} ms later`);
});
