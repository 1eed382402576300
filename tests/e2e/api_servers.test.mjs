// `llmserve serve --api-server-count 2`: both frontends listen on the one
// --port (SO_REUSEPORT) and the kernel spreads connections over them. For
// each new TCP connection the test finds, through /proc/net/tcp and
// /proc/PID/fd, which frontend process accepted it, then sends a request on
// it: both frontends must answer completions, each with a correct response,
// and GET /metrics on either must count the requests of both, as one server
// would (vLLM's multiprocess Prometheus mode).
//   node --test tests/e2e/api_servers.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, recordTree, raceTimeout, waitUntil, waitForLog }
  from './serve_harness.mjs';
import { parsePrometheus, value } from './prometheus_text.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-apiservers-'));
let server;
let completionsSent = 0;  // every completion this file had answered (200), whichever server took it

before(async () => {
  makeTinyModel(join(work, 'tiny'), 5);
  server = startServe(join(work, 'tiny'), await freePort(), ['--api-server-count', '2', '--max-num-seqs', '16']);
  await waitHealthy(server);
  // /health reached one frontend; wait until both listen and have their engine.
  assert.ok(await waitForLog(server, /frontend \d listening on/, 60_000, 2), server.log);
  assert.ok(await waitForLog(server, /engine rank 0 ready/, 60_000, 2), server.log);
});

after(async () => {
  if (server) {
    const { code } = await stopServe(server);
    assert.equal(code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

// Inode of the server side of the loopback connection whose client port is `clientPort`.
function serverSocketInode(serverPort, clientPort) {
  const hex = (p) => p.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines;
    try { lines = readFileSync(file, 'utf8').split('\n').slice(1); } catch { continue; }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      if (f[1].endsWith(':' + hex(serverPort)) && f[2].endsWith(':' + hex(clientPort))) return f[9];
    }
  }
  return null;
}

// The pid among `pids` that holds socket `inode` open, or null (not accepted yet).
function ownerOf(inode, pids) {
  for (const pid of pids) {
    let fds = [];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {}
    }
  }
  return null;
}

// Opens a connection, finds the frontend that accepted it, sends `method
// path` (with a JSON `body` if given) on it. Returns {pid, status, text}.
async function requestOnNewConnection(frontends, method, path, body = null) {
  const socket = net.connect(server.port, '127.0.0.1');
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  // Accepting is the frontend's business: /proc shows when it has happened.
  const pid = await waitUntil(() => {
    const inode = serverSocketInode(server.port, socket.localPort);
    return inode ? ownerOf(inode, frontends) : null;
  }, 2_000);
  const chunks = [];
  socket.on('data', (d) => chunks.push(d));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  const content = body === null ? '' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  socket.write(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${content}Connection: close\r\n\r\n${body ?? ''}`);
  await raceTimeout(closed, 30_000);
  socket.destroy();
  const raw = Buffer.concat(chunks).toString('utf8');
  const status = Number(raw.slice(9, 12));
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).toLowerCase();
  let text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  if (head.includes('transfer-encoding: chunked')) {
    let out = '';
    for (let rest = text; ;) {
      const nl = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    text = out;
  }
  return { pid, status, text };
}

// A completion on a new connection. Returns {pid, status, json}.
async function completionOnNewConnection(frontends) {
  const body = JSON.stringify({ model: 'tiny', prompt: 'Hello there', max_tokens: 5, temperature: 0, ignore_eos: true });
  const { pid, status, text } = await requestOnNewConnection(frontends, 'POST', '/v1/completions', body);
  if (status === 200) completionsSent++;
  return { pid, status, json: status === 200 ? JSON.parse(text) : text };
}

test('two API servers share one port and both answer', async () => {
  const frontends = recordTree(server).filter((p) => p.comm.startsWith('llmserve-fron')).map((p) => p.pid);
  assert.equal(frontends.length, 2, server.log);
  const reference = await new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'unused', maxRetries: 0 })
    .completions.create({ model: 'tiny', prompt: 'Hello there', max_tokens: 5, temperature: 0, ignore_eos: true });
  completionsSent++;
  const served = new Map(frontends.map((pid) => [pid, 0]));
  // Each connection lands on one frontend (hash of its ports): 40 tries all
  // landing on one of two would have probability 2^-39.
  for (let i = 0; i < 40 && [...served.values()].some((n) => n < 2); i++) {
    const r = await completionOnNewConnection(frontends);
    assert.ok(r.pid !== null, 'no frontend accepted the connection');
    assert.equal(r.status, 200, `frontend ${r.pid}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.choices[0].text, reference.choices[0].text, 'same greedy text from either frontend');
    assert.equal(r.json.usage.completion_tokens, 5);
    served.set(r.pid, served.get(r.pid) + 1);
  }
  for (const [pid, n] of served) assert.ok(n >= 2, `frontend ${pid} answered ${n} requests: ${[...served]}`);
});

// What one scrape says of the whole deployment, when idle after `completionsSent` completions.
function deploymentFigures(text) {
  const families = parsePrometheus(text);  // also: no series twice
  const success = families.get('vllm:request_success_total').samples.reduce((sum, s) => sum + s.value, 0);
  return {
    success,
    http: value(families, 'http_requests_total', { handler: '/v1/completions', method: 'POST', status: '2xx' }),
    generated: value(families, 'vllm:generation_tokens_total', { engine: '0' }),
    latencies: value(families, 'vllm:e2e_request_latency_seconds_count', { engine: '0' }),
    running: value(families, 'vllm:num_requests_running', { engine: '0' }),
    waiting: value(families, 'vllm:num_requests_waiting', { engine: '0' }),
    cacheInfo: families.get('vllm:cache_config_info').samples.length,
  };
}

test('/metrics on either API server counts the requests of both', async () => {
  const frontends = recordTree(server).filter((p) => p.comm.startsWith('llmserve-fron')).map((p) => p.pid);
  assert.equal(frontends.length, 2, server.log);
  // Requests on new connections until each frontend has answered some (see above for the odds).
  const served = new Map(frontends.map((pid) => [pid, 0]));
  for (let i = 0; i < 40 && (i < 6 || [...served.values()].some((n) => n < 2)); i++) {
    const r = await completionOnNewConnection(frontends);
    assert.equal(r.status, 200, `frontend ${r.pid}: ${JSON.stringify(r.json)}`);
    served.set(r.pid, served.get(r.pid) + 1);
  }
  for (const [pid, n] of served) assert.ok(n >= 2, `frontend ${pid} answered ${n} requests: ${[...served]}`);
  const expected = { success: completionsSent, http: completionsSent, generated: 5 * completionsSent,
                     latencies: completionsSent, running: 0, waiting: 0, cacheInfo: 1 };

  // Every request has been answered; a server shows another's within a moment (it publishes its
  // values when they change). Scrape on new connections until each server has shown the totals.
  const scrapes = [];
  const complete = new Set();
  let lastSuccess = 0;
  const scrape = async () => {
    const r = await requestOnNewConnection(frontends, 'GET', '/metrics');
    assert.equal(r.status, 200, r.text);
    const figures = deploymentFigures(r.text);
    // Counted totals never go down, whichever server answers.
    assert.ok(figures.success >= lastSuccess, `request_success_total went down: ${lastSuccess} -> ${figures.success}`);
    lastSuccess = figures.success;
    scrapes.push({ pid: r.pid, ...figures });
    return { pid: r.pid, figures };
  };
  const converged = await waitUntil(async () => {
    const { pid, figures } = await scrape();
    if (JSON.stringify(figures) === JSON.stringify(expected)) complete.add(pid);
    return complete.size === frontends.length;
  }, 30_000);
  assert.ok(converged, `not every server showed ${JSON.stringify(expected)}:\n${JSON.stringify(scrapes.slice(-6))}`);

  // From then on every scrape, on either server, shows them.
  const after = new Map(frontends.map((pid) => [pid, 0]));
  for (let i = 0; i < 40 && (i < 6 || [...after.values()].some((n) => n < 2)); i++) {
    const { pid, figures } = await scrape();
    assert.deepEqual(figures, expected, `scrape ${i} on frontend ${pid}`);
    after.set(pid, after.get(pid) + 1);
  }
  for (const [pid, n] of after) assert.ok(n >= 2, `frontend ${pid} answered ${n} scrapes: ${[...after]}`);
});
