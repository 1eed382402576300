// End-to-end: `llmserve serve --ssl-certfile --ssl-keyfile` (vLLM's TLS
// flags) with certificates the openssl command makes here. The official
// `openai` client talks HTTPS (trusting only the test's CA), streaming too;
// a plain-HTTP client gets no answer; a file that does not exist stops the
// launcher with an error naming the flag before any engine starts. Run by ctest:
//   node --test tests/e2e/tls.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { request } from 'node:https';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitUntil, waitExit, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-tls-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let ca;

// A CA, and a certificate for 127.0.0.1 it signed.
function makeCertificates() {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const openssl = (args) => execFileSync('openssl', args, { cwd: work, stdio: 'pipe' });
  writeFileSync(join(work, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=e2e-ca']);
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
           '-extfile', 'san.ext', '-out', 'server.pem']);
  return readFileSync(join(work, 'ca.pem'));
}

// fetch over node:https trusting only `ca`: the client's transport, as a
// deployment with a private CA would set it up.
function fetchTrusting(caPem) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: Object.fromEntries(new Headers(init.headers)), ca: caPem },
                        (res) => resolve(new Response(Readable.toWeb(res), { status: res.statusCode,
                                                                              headers: res.headers })));
    req.on('error', reject);
    init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
    req.end(init.body ?? undefined);
  });
}

before(async () => {
  makeTinyModel(modelDir, 21);
  ca = makeCertificates();
  port = await freePort();
  server = startServe(modelDir, port, ['--ssl-certfile', join(work, 'server.pem'),
                                       '--ssl-keyfile', join(work, 'server.key')]);
  const healthy = await waitUntil(async () => {
    if (server.proc.exitCode !== null) throw new Error(`server exited early:\n${server.log}`);
    try {
      return (await fetchTrusting(ca)(`https://127.0.0.1:${port}/health`)).status === 200;
    } catch {
      return false;  // not listening yet
    }
  }, 90_000, 100);
  assert.ok(healthy, `not healthy over HTTPS in time:\n${server.log}`);
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

test('the openai client over HTTPS, plain and streamed', async () => {
  const client = new OpenAI({ baseURL: `https://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0,
                              timeout: 60_000, fetch: fetchTrusting(ca) });
  const r = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }],
                                                   max_tokens: 5, temperature: 0, ignore_eos: true });
  assert.equal(r.usage.completion_tokens, 5);
  const stream = await client.completions.create({ model: 'tiny', prompt: 'hello', max_tokens: 6, temperature: 0,
                                                   ignore_eos: true, stream: true });
  let text = '';
  let chunks = 0;
  for await (const c of stream) {
    text += c.choices[0]?.text ?? '';
    ++chunks;
  }
  assert.ok(chunks >= 6, `${chunks} chunks`);
  const whole = await client.completions.create({ model: 'tiny', prompt: 'hello', max_tokens: 6, temperature: 0,
                                                  ignore_eos: true });
  assert.equal(text, whole.choices[0].text);
});

test('a client that does not trust the certificate, and plain HTTP, get no answer', async () => {
  await assert.rejects(fetch(`https://127.0.0.1:${port}/health`));  // the system CAs do not know the test CA
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
});

test('a certificate file that is not there stops the launcher with the flag named', async () => {
  const bad = startServe(modelDir, await freePort(), ['--ssl-certfile', join(work, 'missing.pem')]);
  const exit = await waitExit(bad, 30_000);
  assert.ok(exit && exit.code !== 0, `exit ${JSON.stringify(exit)}\n${bad.log}`);
  assert.match(bad.log, /--ssl-certfile '.*missing\.pem'/);
});
