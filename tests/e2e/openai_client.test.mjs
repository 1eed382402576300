// End-to-end: `llmserve serve` on 127.0.0.1 with a tiny random-weight Qwen3
// model, driven by the official `openai` npm client. Run by ctest:
//   node --test tests/e2e/openai_client.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, waitForLog, logCount } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-e2e-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let client;
let baseURL;



async function post(path, body, headers = {}) {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: r.status, json, text };
}

before(async () => {
  makeTinyModel(modelDir, 7);
  port = await freePort();
  server = startServe(modelDir, port, ['--max-num-seqs', '64', '--enable-request-id-headers',
                                       '--enable-log-requests', '--enable-log-outputs', '--max-log-len', '40',
                                       // compact JSON: a random-weight model would spend its tokens on whitespace
                                       '--structured-outputs-config', '{"disable_any_whitespace": true}']);
  await waitHealthy(server);
  baseURL = `http://127.0.0.1:${port}/v1`;
  client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

const greedy = { model: 'tiny', prompt: 'The capital of France is', max_tokens: 8, temperature: 0, ignore_eos: true };

test('models and health', async () => {
  const models = await client.models.list();
  assert.equal(models.data[0].id, 'tiny');
  assert.equal(models.data[0].max_model_len, 512, 'the engines\' context length (--max-model-len 512)');
  const v = await fetch(`http://127.0.0.1:${port}/version`);
  assert.equal(v.status, 200);
});

test('responses say which data-parallel rank served them', async () => {
  const { response } = await client.completions.create(greedy).withResponse();
  assert.equal(response.headers.get('x-data-parallel-rank'), '0');
  const { response: streamed } = await client.completions.create({ ...greedy, stream: true }).withResponse();
  assert.equal(streamed.headers.get('x-data-parallel-rank'), '0');
});

test('completion: non-streaming and streaming give the same greedy text', async () => {
  const full = await client.completions.create(greedy);
  assert.equal(full.choices.length, 1);
  assert.equal(full.choices[0].finish_reason, 'length');
  assert.equal(full.usage.completion_tokens, 8);
  assert.ok(full.usage.prompt_tokens > 0);
  const stream = await client.completions.create({ ...greedy, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  assert.equal(text, full.choices[0].text);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 8);
});

test('chat: streaming and not, n > 1, usage', async () => {
  const messages = [{ role: 'user', content: 'Hello! Who are you?' }];
  const r = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 6, temperature: 0, n: 2 });
  assert.equal(r.choices.length, 2);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(r.choices[0].message.content, r.choices[1].message.content);  // greedy: equal
  assert.equal(r.usage.completion_tokens, 12);
  const s = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 6, temperature: 0, stream: true });
  let content = '';
  let role = null;
  for await (const chunk of s) {
    for (const c of chunk.choices) {
      if (c.delta.role) role = c.delta.role;
      if (c.delta.content) content += c.delta.content;
    }
  }
  assert.equal(role, 'assistant');
  assert.equal(content, r.choices[0].message.content);
});

test('stop strings cut the text and report stop_reason', async () => {
  const full = await client.completions.create({ ...greedy, max_tokens: 16 });
  const text = full.choices[0].text;
  // Stop at a substring of the greedy output.
  const cut = Math.max(1, Math.floor(text.length / 2));
  const stop = text.slice(cut, cut + 2);
  if (stop.length < 1) return;
  const r = await client.completions.create({ ...greedy, max_tokens: 16, stop: [stop] });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.equal(r.choices[0].text, text.slice(0, text.indexOf(stop)));
  assert.equal(r.choices[0].stop_reason, stop);
});

test('logprobs', async () => {
  const r = await client.completions.create({ ...greedy, max_tokens: 3, logprobs: 2 });
  const lp = r.choices[0].logprobs;
  assert.equal(lp.tokens.length, 3);
  assert.equal(lp.token_logprobs.length, 3);
  for (const v of lp.token_logprobs) assert.ok(v <= 0);
  const c = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }],
                                                   max_tokens: 3, temperature: 0, logprobs: true, top_logprobs: 2 });
  assert.equal(c.choices[0].logprobs.content.length, 3);
  assert.equal(c.choices[0].logprobs.content[0].top_logprobs.length, 2);
});

test('64 concurrent streams all finish', async () => {
  const runs = [];
  for (let i = 0; i < 64; i++) {
    runs.push((async () => {
      const s = await client.completions.create({ model: 'tiny', prompt: `Request ${i}:`, max_tokens: 8,
                                                  temperature: 1.0, seed: i, ignore_eos: true, stream: true });
      let n = 0;
      for await (const chunk of s) n += chunk.choices.length;
      return n;
    })());
  }
  const counts = await Promise.all(runs);
  for (const n of counts) assert.ok(n >= 1);
});

test('a client that aborts mid-stream frees its request', async () => {
  const controller = new AbortController();
  const s = await client.completions.create({ ...greedy, max_tokens: 400, stream: true }, { signal: controller.signal });
  let seen = 0;
  try {
    for await (const chunk of s) {
      seen += chunk.choices.length;
      if (seen >= 2) controller.abort();
    }
  } catch (e) {
    assert.ok(/abort/i.test(String(e.name) + String(e.message)));
  }
  // The server keeps serving.
  const r = await client.completions.create(greedy);
  assert.equal(r.usage.completion_tokens, 8);
});

test('bad inputs get OpenAI-style errors', async () => {
  let r = await post('/v1/completions', '{not json');
  assert.equal(r.status, 400);
  assert.equal(r.json.error.code, 400);
  r = await post('/v1/completions', { model: 'tiny', prompt: 'x', temperature: 'hot' });
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /temperature/);
  r = await post('/v1/completions', { model: 'nope', prompt: 'x' });
  assert.equal(r.status, 404);
  assert.match(r.json.error.message, /nope/);
  r = await post('/v1/completions', { model: 'tiny', prompt: '' });
  assert.equal(r.status, 400);
  r = await post('/v1/completions', { model: 'tiny', prompt: 'x', max_tokens: 100000 });
  assert.equal(r.status, 400);
  assert.match(r.json.error.message, /max|context|length/i);
  r = await post('/v1/completions', { model: 'tiny', prompt: [999999999] });
  assert.equal(r.status, 400);
  r = await post('/v1/chat/completions', { model: 'tiny', messages: 'hi' });
  assert.equal(r.status, 400);
  const big = 'a'.repeat(9 << 20);
  r = await post('/v1/completions', { model: 'tiny', prompt: big });
  assert.equal(r.status, 413);
});

test('tokenize and detokenize', async () => {
  const t = await post('/tokenize', { model: 'tiny', prompt: 'The capital of France is' });
  assert.equal(t.status, 200);
  assert.deepEqual(t.json.tokens, [785, 6722, 315, 9625, 374]);
  const d = await post('/detokenize', { model: 'tiny', tokens: [785, 6722, 315, 9625, 374] });
  assert.equal(d.json.prompt, 'The capital of France is');
});

test('CORS: a browser preflight is answered and responses name the allowed origin', async () => {
  const base = `http://127.0.0.1:${port}`;
  const preflight = await fetch(`${base}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST',
               'access-control-request-headers': 'authorization, content-type' },
  });
  assert.equal(preflight.status, 200);
  assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
  assert.equal(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type');
  assert.match(preflight.headers.get('access-control-allow-methods'), /POST/);
  const r = await fetch(`${base}/v1/models`, { headers: { origin: 'https://app.example' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  const stream = await fetch(`${base}/v1/completions`, {
    method: 'POST', headers: { origin: 'https://app.example', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', prompt: 'Hi', max_tokens: 2, stream: true }),
  });
  assert.equal(stream.headers.get('access-control-allow-origin'), '*');
  await stream.text();
  const plain = await fetch(`${base}/v1/models`);
  assert.equal(plain.headers.get('access-control-allow-origin'), null, 'no Origin, no CORS headers');
});

test('X-Request-Id headers, tokens as token ids, and the request log', async () => {
  const base = `http://127.0.0.1:${port}`;
  const echoed = await fetch(`${base}/v1/models`, { headers: { 'x-request-id': 'client-7' } });
  assert.equal(echoed.headers.get('x-request-id'), 'client-7');
  const fresh = await fetch(`${base}/v1/models`);
  assert.match(fresh.headers.get('x-request-id'), /^[0-9a-f]{32}$/);

  const r = await fetch(`${base}/v1/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'logged-1' },
    body: JSON.stringify({ ...greedy, max_tokens: 3, logprobs: 2, return_tokens_as_token_ids: true }),
  });
  assert.equal(r.headers.get('x-request-id'), 'logged-1');
  const lp = (await r.json()).choices[0].logprobs;
  for (const t of lp.tokens) assert.match(t, /^token_id:\d+$/);
  for (const top of lp.top_logprobs) for (const k of Object.keys(top)) assert.match(k, /^token_id:\d+$/);
  const c = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }],
                                                   max_tokens: 2, temperature: 0, logprobs: true, top_logprobs: 1,
                                                   return_tokens_as_token_ids: true });
  for (const t of c.choices[0].logprobs.content) assert.match(t.token, /^token_id:\d+$/);

  assert.ok(await waitForLog(server, /Received request cmpl-logged-1-0: prompt: "The capital of France is", params: SamplingParams\(/, 10_000),
            `no request line\n${server.log.slice(-2000)}`);
  assert.ok(await waitForLog(server, /Generated response cmpl-logged-1-0: output: ".*", output_token_ids: \[\d+, \d+, \d+\], finish_reason: length/, 10_000),
            `no output line\n${server.log.slice(-2000)}`);
});

test('unknown request fields are named in the log once per set', async () => {
  const line = /The following fields were present in the request but ignored: \{'not_a_field_zz'\}/;
  for (let i = 0; i < 3; ++i) {
    const r = await post('/v1/completions', { ...greedy, max_tokens: 1, not_a_field_zz: i });
    assert.equal(r.status, 200, r.text);
  }
  // The frontend logs this request's line after any warning of the three before it.
  const after = await post('/v1/completions', { ...greedy, max_tokens: 1 }, { 'x-request-id': 'after-ignored' });
  assert.equal(after.status, 200, after.text);
  assert.ok(await waitForLog(server, /Received request cmpl-after-ignored-0/, 10_000), server.log.slice(-2000));
  assert.equal(logCount(server, line), 1, server.log.slice(-3000));
});

test('responses API: text, instructions, a stream equal to the answer, previous_response_id, retrieve', async () => {
  const args = { model: 'tiny', input: 'Say something.', instructions: 'Be brief.', max_output_tokens: 6,
                 temperature: 0, ignore_eos: true };
  const r = await client.responses.create(args);
  assert.match(r.id, /^resp_/);
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'incomplete', 'max_output_tokens ended it');
  assert.equal(r.incomplete_details.reason, 'max_output_tokens');
  assert.equal(r.usage.output_tokens, 6);
  assert.equal(r.instructions, 'Be brief.');
  assert.equal(r.output[0].type, 'message');
  assert.equal(r.output[0].role, 'assistant');
  assert.equal(r.output_text, r.output[0].content[0].text, 'the SDK joins the output_text parts');

  // The same request as a chat completion renders the same prompt.
  const chat = await client.chat.completions.create({ model: 'tiny', max_tokens: 6, temperature: 0, ignore_eos: true,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say something.' }] });
  assert.equal(r.output_text, chat.choices[0].message.content);
  assert.equal(r.usage.input_tokens, chat.usage.prompt_tokens);

  const stream = await client.responses.create({ ...args, stream: true });
  const types = [];
  let text = '';
  let completed;
  for await (const e of stream) {
    types.push(e.type);
    if (e.type === 'response.output_text.delta') text += e.delta;
    if (e.type === 'response.completed') completed = e.response;
  }
  assert.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added',
                                       'response.content_part.added']);
  assert.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done',
                                     'response.output_item.done', 'response.completed']);
  assert.equal(text, r.output_text);
  assert.equal(completed.output[0].content[0].text, r.output_text);

  // A follow-up sees the stored conversation: its prompt holds the first answer.
  const next = await client.responses.create({ model: 'tiny', input: 'And more?', previous_response_id: r.id,
                                               max_output_tokens: 2, temperature: 0 });
  const alone = await client.responses.create({ model: 'tiny', input: 'And more?', max_output_tokens: 2,
                                                temperature: 0, store: false });
  assert.ok(next.usage.input_tokens > alone.usage.input_tokens + 6, `${next.usage.input_tokens} vs ${alone.usage.input_tokens}`);
  await assert.rejects(client.responses.create({ model: 'tiny', input: 'x', previous_response_id: alone.id }),
                       (e) => e.status === 404, 'store: false keeps nothing');

  // Stored responses come back as created (a streamed one as response.completed carried it); one that is not
  // running in the background cannot be cancelled; unknown and store: false ids are vLLM's 404.
  assert.deepEqual(await client.responses.retrieve(r.id), r);
  const { output_text: streamedText, ...streamedAgain } = await client.responses.retrieve(completed.id);
  assert.deepEqual(streamedAgain, completed);
  assert.equal(streamedText, r.output_text);
  await assert.rejects(client.responses.cancel(r.id),
                       (e) => e.status === 400 && e.type === 'invalid_request_error' &&
                              /Cannot cancel a synchronous response/.test(e.message));
  await assert.rejects(client.responses.retrieve(alone.id),
                       (e) => e.status === 404 && e.type === 'invalid_request_error' && e.param === 'response_id' &&
                              e.message.includes(`Response with id '${alone.id}' not found.`));
  await assert.rejects(client.responses.cancel('resp_unknown'), (e) => e.status === 404);
  await assert.rejects(client.responses.create({ model: 'tiny', input: 'x', tools: [{ type: 'function', name: 'f' }] }),
                       (e) => e.status === 400 && /tools/.test(e.message));
});

test('responses API: text.format json_schema constrains the output', async () => {
  // One digit: the output always ends well within max_output_tokens.
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['n'],
                   additionalProperties: false };
  const r = await client.responses.create({ model: 'tiny', input: 'A number?', temperature: 1, max_output_tokens: 40,
                                            text: { format: { type: 'json_schema', name: 'n', schema, strict: true } } });
  assert.equal(r.status, 'completed', r.output_text);
  assert.ok(Number.isInteger(JSON.parse(r.output_text).n), r.output_text);
});
