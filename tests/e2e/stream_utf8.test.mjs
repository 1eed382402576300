// "Streams never break": a random-weight model sampled at temperature 1.0
// emits token sequences whose single tokens are often pieces of a multi-byte
// UTF-8 character. Over 1 000 streamed completions (openai client, 32 at a
// time) every stream must end with `data: [DONE]`, its raw bytes must be valid
// UTF-8, and the concatenated deltas must equal the non-streamed
// detokenization (/detokenize) of the very token ids the stream reported
// (return_token_ids).
//   node --test tests/e2e/stream_utf8.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, processTree } from './serve_harness.mjs';

const kRequests = Number(process.env.LLMSERVE_STREAM_REQUESTS ?? 1000);  // fewer only for debugging
const kConcurrency = 32;
const work = mkdtempSync(join(tmpdir(), 'llmserve-utf8-'));
let server;
let client;
// Ids the tokenizer knows; the model's vocabulary (151936) is larger, and ids
// beyond the tokenizer's decode to no text (as in vLLM), while /detokenize refuses them.
let tokenizerSize;
// Sampling is limited (allowed_token_ids) to the 256 single-byte tokens plus
// 3 840 pseudo-random ids of the whole vocabulary, so that pieces of
// characters are frequent (about 1 token in 30 instead of 1 in 90).
let allowed;

before(async () => {
  makeTinyModel(join(work, 'tiny'), 11);
  const tok = JSON.parse(readFileSync(join(work, 'tiny', 'tokenizer.json'), 'utf8'));
  tokenizerSize = 1 + [...Object.values(tok.model.vocab), ...tok.added_tokens.map((t) => t.id)]
    .reduce((a, b) => Math.max(a, b), 0);
  const ids = new Set(Array.from({ length: 256 }, (_, i) => i));
  for (let x = 12345; ids.size < 4096;) {
    x = (x * 1103515245 + 12345) % 2147483648;
    ids.add(x % tokenizerSize);
  }
  allowed = [...ids];
  server = startServe(join(work, 'tiny'), await freePort(), ['--max-num-seqs', '64']);
  await waitHealthy(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${server.port}/v1`, apiKey: 'unused', maxRetries: 0,
                        timeout: 60_000 });
});

after(async () => {
  if (server) {
    const { code } = await stopServe(server);
    assert.equal(code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

async function detokenize(tokens) {
  const r = await fetch(`http://127.0.0.1:${server.port}/detokenize`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', tokens }),
  });
  assert.equal(r.status, 200);
  return (await r.json()).prompt;
}

// One streamed completion read as raw SSE: {text, ids, done, usage}.
async function streamOne(i) {
  const response = await client.completions.create({
    model: 'tiny', prompt: `Sample ${i}:`, max_tokens: 8 + (i % 9), temperature: 1.0, seed: 1000 + i,
    ignore_eos: true, skip_special_tokens: false, return_token_ids: true, allowed_token_ids: allowed,
    stream: true, stream_options: { include_usage: true },
  }).asResponse();
  assert.equal(response.status, 200);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const raw = new TextDecoder('utf-8', { fatal: true }).decode(bytes);  // throws on invalid UTF-8
  const events = raw.split('\n\n').filter((e) => e.length > 0);
  const result = { text: '', ids: [], done: false, usage: null, finish: null };
  for (const [k, event] of events.entries()) {
    assert.ok(event.startsWith('data: '), `request ${i}: not an SSE data event: ${JSON.stringify(event)}`);
    const data = event.slice('data: '.length);
    if (data === '[DONE]') {
      assert.equal(k, events.length - 1, `request ${i}: events after [DONE]`);
      result.done = true;
      continue;
    }
    const chunk = JSON.parse(data);
    if (chunk.usage) result.usage = chunk.usage;
    for (const c of chunk.choices) {
      result.text += c.text;
      if (c.finish_reason) result.finish = c.finish_reason;
      result.ids.push(...(c.token_ids ?? []));
    }
  }
  return result;
}

// CPU seconds used so far by the server's processes (the machine may be shared:
// this, not wall time, says what the test costs).
function serverCpuSeconds() {
  let ticks = 0;
  for (const p of processTree(server.proc.pid)) {
    try {
      const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {}
  }
  return ticks / 100;
}

test('1000 temperature-1.0 streams end with [DONE] and never split a character', async () => {
  const cpu0 = serverCpuSeconds();
  const t0 = Date.now();
  const results = new Array(kRequests);
  let next = 0;
  const runners = [];
  for (let r = 0; r < kConcurrency; r++) {
    runners.push((async () => {
      while (next < kRequests) {
        const i = next++;
        results[i] = await streamOne(i);
      }
    })());
  }
  await Promise.all(runners);
  const streamSeconds = (Date.now() - t0) / 1000;
  const cpuSeconds = serverCpuSeconds() - cpu0;

  let withReplacement = 0;
  for (const [i, r] of results.entries()) {
    assert.ok(r.done, `request ${i}: the stream did not end with [DONE]`);
    assert.equal(r.finish, 'length', `request ${i}`);
    assert.equal(r.ids.length, 8 + (i % 9), `request ${i}: token ids reported`);
    assert.equal(r.usage?.completion_tokens, r.ids.length, `request ${i}: usage`);
    const whole = await detokenize(r.ids.filter((id) => id < tokenizerSize));
    assert.equal(r.text, whole, `request ${i}: streamed text differs from the detokenized ids ${r.ids}`);
    if (whole.includes('\uFFFD')) ++withReplacement;
  }
  // The test means something only if single tokens were pieces of characters:
  // count sampled tokens that alone are not valid UTF-8 (decode to U+FFFD).
  const sample = results.slice(0, 40).flatMap((r) => r.ids).filter((id) => id < tokenizerSize);
  let partial = 0;
  for (const id of sample) if ((await detokenize([id])).includes('\uFFFD')) ++partial;
  assert.ok(partial > 0, `none of ${sample.length} sampled tokens is a partial UTF-8 character`);
  console.log(`# ${kRequests} streams in ${streamSeconds.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} s server CPU; ` +
              `${partial}/${sample.length} sampled tokens are partial characters; ` +
              `${withReplacement} full texts hold an unfinished or invalid sequence (U+FFFD on both sides)`);
});
