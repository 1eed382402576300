// Closed-loop load generator for scripts/bench_max_rps: at each concurrency
// level, C clients send requests back to back over keep-alive connections for
// a fixed time. Measures /v1/completions with max_tokens=1 (tokenize, one
// engine step, detokenize, answer) and, as the baseline in the same run, GET
// /health (the HTTP server alone). Prints one JSON object.
//   node scripts/bench_max_rps.mjs --url http://127.0.0.1:8000 --model tiny
//        [--seconds 5] [--concurrency 16,64,256] [--pids PID,...]
// --pids: processes whose CPU time (with their descendants) is reported per request.
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const url = new URL(args.url ?? 'http://127.0.0.1:8000');
const model = args.model ?? 'tiny';
const seconds = Number(args.seconds ?? 5);
const levels = (args.concurrency ?? '16,64,256').split(',').map(Number);
const pids = (args.pids ?? '').split(',').filter(Boolean).map(Number);
const ticksPerSecond = 100;  // USER_HZ on Linux

// CPU seconds used so far by `roots` and all their descendants.
function treeCpuSeconds(roots) {
  const procs = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) });
    } catch {}
  }
  let ticks = 0;
  const frontier = [...roots];
  const seen = new Set();
  while (frontier.length) {
    const pid = frontier.pop();
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (procs.has(pid)) ticks += procs.get(pid).ticks;
    for (const [child, p] of procs) if (p.ppid === pid) frontier.push(child);
  }
  return ticks / ticksPerSecond;
}

function send(agent, method, path, body) {
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, agent,
                               headers: body ? { 'content-type': 'application/json',
                                                 'content-length': Buffer.byteLength(body) } : {} },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode));
      });
    req.on('error', () => resolve(0));
    if (body) req.write(body);
    req.end();
  });
}

async function run(kind, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = kind === 'completion'
    ? JSON.stringify({ model, prompt: 'Hello, my name is', max_tokens: 1, temperature: 0 }) : null;
  const method = body ? 'POST' : 'GET';
  const path = body ? '/v1/completions' : '/health';
  // Warm-up: open the connections.
  await Promise.all(Array.from({ length: concurrency }, () => send(agent, method, path, body)));
  const latencies = [];
  let ok = 0;
  let errors = 0;
  const cpu0 = treeCpuSeconds(pids);
  const client0 = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      const status = await send(agent, method, path, body);
      if (status === 200) {
        ++ok;
        latencies.push(performance.now() - t);
      } else {
        ++errors;
      }
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  const serverCpu = treeCpuSeconds(pids) - cpu0;
  const client = process.cpuUsage(client0);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (q) => latencies.length ? Number(latencies[Math.min(latencies.length - 1,
                                                                   Math.floor(q * latencies.length))].toFixed(2)) : null;
  return {
    kind, concurrency, requests: ok, errors, seconds: Number(elapsed.toFixed(2)),
    requests_per_s: Number((ok / elapsed).toFixed(1)),
    latency_ms: { p50: pct(0.5), p90: pct(0.9), p99: pct(0.99) },
    server_cpu_ms_per_request: pids.length && ok ? Number((serverCpu * 1000 / ok).toFixed(3)) : null,
    client_cpu_s: Number(((client.user + client.system) / 1e6).toFixed(2)),
  };
}

const results = [];
for (const c of levels) {
  results.push(await run('health', c));
  results.push(await run('completion', c));
}
const best = (kind) => results.filter((r) => r.kind === kind && r.errors === 0)
  .reduce((a, r) => (!a || r.requests_per_s > a.requests_per_s ? r : a), null);
const bestCompletion = best('completion');
const bestHealth = best('health');
console.log(JSON.stringify({
  max_completion_requests_per_s: bestCompletion?.requests_per_s ?? 0,
  at_concurrency: bestCompletion?.concurrency ?? null,
  max_health_requests_per_s: bestHealth?.requests_per_s ?? 0,
  completion_to_health_ratio: bestCompletion && bestHealth
    ? Number((bestCompletion.requests_per_s / bestHealth.requests_per_s).toFixed(3)) : null,
  runs: results,
}, null, 1));
