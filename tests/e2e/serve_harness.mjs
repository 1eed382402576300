// Helpers for end-to-end tests that start `llmserve serve` on 127.0.0.1:
// model generation, free ports, health waits, bounded stops, and the process
// tree read from /proc (to find workers and check that nothing is left).
//
// Tests wait on what they need, never for a fixed time: on a promise (a
// response, an exit), on a log line (waitForLog), or, where the only
// observable is a state read again and again (/health, /proc, a counter), by
// polling it with a deadline (waitUntil).
import { spawn, execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';

export const bin = process.env.LLMSERVE_BIN ?? 'build/bin';

// Writes the tiny random-weight Qwen3 (real Qwen3 tokenizer) into `dir`.
export function makeTinyModel(dir, seed = 7) {
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--out', dir,
                                       '--seed', String(seed)], { stdio: 'ignore' });
}

// Ports this test process has handed out already: a port is free until its
// server binds it, so without this two draws in one test could collide.
const handedOut = new Set();

// `count` consecutive TCP ports nobody listens on right now and not handed out
// before by this process; returns the first. They are drawn below the kernel's
// ephemeral range (32768+), where outgoing connections of tests running beside
// this one never take them between this check and the server's bind.
export async function freePortRange(count) {
  const bindable = (port) => new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  for (let attempt = 0; attempt < 50; ++attempt) {
    const base = 20000 + Math.floor(Math.random() * 12000);
    let ok = true;
    for (let p = base; ok && p < base + count; ++p) ok = !handedOut.has(p) && await bindable(p);
    if (!ok) continue;
    for (let p = base; p < base + count; ++p) handedOut.add(p);
    return base;
  }
  throw new Error(`no ${count} free consecutive ports in 20000..32000`);
}

// A TCP port nobody listens on right now (see freePortRange).
export function freePort() {
  return freePortRange(1);
}

// Resolves after `ms`. Only for pacing a load on purpose; to wait for
// something, use waitUntil or waitForLog.
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Calls `predicate` (sync or async) every `pollMs` until it returns a truthy
// value, and returns that value; after `timeoutMs` returns the last (falsy)
// one. The predicate is asked once more at the deadline.
export async function waitUntil(predicate, timeoutMs, pollMs = 20) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value || Date.now() >= deadline) return value;
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
  }
}

// How many times `re` matches the server's log so far.
export function logCount(server, re) {
  return (server.log.match(new RegExp(re.source, 'g')) ?? []).length;
}

// Resolves true once the server's log holds `count` matches of `re`, checked
// as each piece of output arrives; false after `ms` or when the server exits.
export function waitForLog(server, re, ms, count = 1) {
  return new Promise((resolve) => {
    const streams = [server.proc.stdout, server.proc.stderr];
    let timer;
    const done = (value) => {
      clearTimeout(timer);
      for (const s of streams) s.off('data', check);
      server.proc.off('exit', gone);
      resolve(value);
    };
    // Registered after startServe's listeners, so server.log already has the piece.
    const check = () => { if (logCount(server, re) >= count) done(true); };
    const gone = () => done(logCount(server, re) >= count);
    if (logCount(server, re) >= count) return resolve(true);
    timer = setTimeout(() => done(false), ms);
    for (const s of streams) s.on('data', check);
    server.proc.on('exit', gone);
  });
}

// Every launched server, so that a failing test still leaves nothing behind.
const launched = new Set();
process.on('exit', () => {
  for (const s of launched) {
    for (const pid of s.treePids) { try { process.kill(pid, 'SIGKILL'); } catch {} }
    try { s.proc.kill('SIGKILL'); } catch {}
  }
});

// LLMSERVE_E2E_DEVICE=cuda (scripts/cuda_e2e): startServe's servers run on
// the GPU, which computes in bfloat16 only; unset, they run the CPU's float32.
export const e2eDevice = process.env.LLMSERVE_E2E_DEVICE ?? 'cpu';
const deviceArgs = e2eDevice === 'cpu' ? ['--dtype', 'float32'] : ['--device', e2eDevice, '--dtype', 'bfloat16'];

// Starts `llmserve serve MODEL_DIR --host 127.0.0.1 --port PORT ...args`.
export function startServe(modelDir, port, args = []) {
  return startLauncher(port, [modelDir, '--served-model-name', 'tiny', '--max-model-len', '512',
                              '--kv-cache-memory', '64M', ...deviceArgs, ...args]);
}

// Starts `llmserve serve ...args --host 127.0.0.1 --port PORT` with nothing
// else on the command line, and `env` added to the environment.
export function startLauncher(port, args = [], env = {}) {
  const proc = spawn(join(bin, 'llmserve'), ['serve', ...args, '--host', '127.0.0.1', '--port', String(port)],
                     { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const server = { proc, port, log: '', treePids: new Set() };
  proc.stdout.on('data', (d) => { server.log += d; });
  proc.stderr.on('data', (d) => { server.log += d; });
  server.exited = new Promise((r) => proc.on('exit', (code, signal) => r({ code, signal })));
  launched.add(server);
  return server;
}

// Resolves once GET /health answers 200; throws (with the log) on exit or timeout.
export async function waitHealthy(server, deadlineMs = 90_000) {
  const healthy = await waitUntil(async () => {
    if (server.proc.exitCode !== null || server.proc.signalCode !== null)
      throw new Error(`server exited early (${server.proc.exitCode}):\n${server.log}`);
    try {
      return (await fetch(`http://127.0.0.1:${server.port}/health`)).status === 200;
    } catch {
      return false;  // not listening yet
    }
  }, deadlineMs, 100);
  if (!healthy) throw new Error(`server not healthy in time:\n${server.log}`);
}

// Waits up to `ms` for the launcher to exit; null when it did not.
export async function waitExit(server, ms) {
  return raceTimeout(server.exited, ms);
}

// `promise`'s value, or null after `ms`. The timer is cleared either way: a
// pending one would keep node (and the test) alive for the full `ms`.
export async function raceTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((r) => { timer = setTimeout(() => r(null), ms); });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// SIGTERM, then SIGKILL of the whole tree after `ms`. Returns how the launcher ended.
export async function stopServe(server, ms = 30_000) {
  if (server.proc.exitCode === null && server.proc.signalCode === null) server.proc.kill('SIGTERM');
  let exit = await waitExit(server, ms);
  if (!exit) {
    for (const pid of processTree(server.proc.pid)) { try { process.kill(pid.pid, 'SIGKILL'); } catch {} }
    server.proc.kill('SIGKILL');
    exit = await server.exited;
  }
  launched.delete(server);
  return exit;
}

// {pid, ppid, comm, state} of every process, from /proc/PID/stat.
function allProcesses() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      out.push({ pid: Number(name), state: fields[0], ppid: Number(fields[1]), comm });
    } catch {}  // exited while we read
  }
  return out;
}

// The live descendants of `rootPid` (not itself), each {pid, ppid, comm, state}.
export function processTree(rootPid) {
  const procs = allProcesses();
  const tree = [];
  const frontier = [rootPid];
  while (frontier.length) {
    const parent = frontier.pop();
    for (const p of procs) {
      if (p.ppid === parent && p.state !== 'Z') {
        tree.push(p);
        frontier.push(p.pid);
      }
    }
  }
  return tree;
}

// Records the current tree of `server` (so a later leak check knows every pid).
export function recordTree(server) {
  const tree = processTree(server.proc.pid);
  for (const p of tree) server.treePids.add(p.pid);
  return tree;
}

// True while `pid` exists and is not a zombie.
export function alive(pid) {
  if (!existsSync(`/proc/${pid}`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

// Waits up to `ms` until none of `pids` is alive; returns those still alive.
export async function waitGone(pids, ms) {
  await waitUntil(() => ![...pids].some(alive), ms, 50);
  return [...pids].filter(alive);
}
