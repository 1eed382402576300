// End-to-end: tool calls and reasoning output through the official `openai`
// client against `llmserve serve --enable-auto-tool-choice --tool-call-parser
// hermes --reasoning-parser qwen3` on a tiny random-weight Qwen3 model (the
// real Qwen3 tokenizer and chat template). tool_choice "required" and named
// functions are enforced by the grammar engine, so even random weights give
// calls whose arguments validate (ajv). Run by ctest:
//   node --test tests/e2e/tool_calls.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';

const require = createRequire(import.meta.url);
const Ajv = require('ajv/dist/2020').default;
const ajv = new Ajv({ strict: false });

const work = mkdtempSync(join(tmpdir(), 'llmserve-tools-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let client;

before(async () => {
  makeTinyModel(modelDir, 13);
  port = await freePort();
  // A long context: under "required", random weights write a few calls on
  // average but sometimes a dozen.
  server = startServe(modelDir, port, ['--max-num-seqs', '8', '--max-model-len', '2048', '--kv-cache-memory', '128M',
                                       '--enable-auto-tool-choice', '--tool-call-parser', 'hermes',
                                       '--reasoning-parser', 'qwen3',
                                       '--structured-outputs-config', '{"disable_any_whitespace": true}']);
  await waitHealthy(server);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

const weather = {
  type: 'object',
  properties: { city: { enum: ['Paris', 'Oslo', 'Lima'] }, unit: { enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
};
const clock = { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'] };
const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: weather } },
  { type: 'function', function: { name: 'get_time', description: 'Time in a zone', parameters: clock } },
];
const THINK_END = '151668';  // "</think>" in Qwen3's vocabulary
const validators = { get_weather: ajv.compile(weather), get_time: ajv.compile(clock) };
// The thinking-off prompt closes the think block, so the output is all content.
const base = { model: 'tiny', messages: [{ role: 'user', content: 'What is the weather?' }], tools,
               temperature: 1.0, max_tokens: 200, chat_template_kwargs: { enable_thinking: false } };

function checkCall(call) {
  assert.equal(call.type, 'function');
  assert.match(call.id, /^chatcmpl-tool-[0-9a-f]{32}$/);
  const validate = validators[call.function.name];
  assert.ok(validate, `unknown function ${call.function.name}`);
  assert.ok(validate(JSON.parse(call.function.arguments)), call.function.arguments);
}

// Streams a request and rebuilds content, reasoning and the calls from the deltas.
async function streamed(body) {
  const calls = [];
  let content = '';
  let reasoning = '';
  let finish = null;
  for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
    for (const ch of chunk.choices) {
      content += ch.delta.content ?? '';
      reasoning += ch.delta.reasoning_content ?? '';
      for (const d of ch.delta.tool_calls ?? []) {
        if (!calls[d.index]) calls[d.index] = { id: d.id, type: d.type, function: { name: d.function?.name, arguments: '' } };
        calls[d.index].function.arguments += d.function?.arguments ?? '';
      }
      finish = ch.finish_reason ?? finish;
    }
  }
  return { calls, content, reasoning, finish };
}

test('named function: the output is its arguments', async () => {
  for (let seed = 0; seed < 4; ++seed) {
    const body = { ...base, seed, tool_choice: { type: 'function', function: { name: 'get_weather' } } };
    const r = await client.chat.completions.create(body);
    const m = r.choices[0].message;
    assert.equal(m.tool_calls.length, 1);
    assert.equal(m.tool_calls[0].function.name, 'get_weather');
    checkCall(m.tool_calls[0]);
    assert.equal(r.choices[0].finish_reason, 'stop');
    const s = await streamed(body);
    assert.equal(s.calls.length, 1);
    checkCall(s.calls[0]);
    assert.equal(s.calls[0].function.arguments, m.tool_calls[0].function.arguments);  // same seed, same text
  }
});

test('required: one or more valid calls, finish_reason tool_calls', async () => {
  for (let seed = 0; seed < 4; ++seed) {
    const body = { ...base, seed, tool_choice: 'required', max_tokens: 1500 };
    const r = await client.chat.completions.create(body);
    assert.ok(r.choices[0].message.tool_calls.length >= 1);
    for (const call of r.choices[0].message.tool_calls) checkCall(call);
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    const s = await streamed(body);
    assert.equal(s.finish, 'tool_calls');
    assert.deepEqual(s.calls.map((c) => [c.function.name, c.function.arguments]),
                     r.choices[0].message.tool_calls.map((c) => [c.function.name, c.function.arguments]));
  }
  const one = await client.chat.completions.create({ ...base, seed: 9, tool_choice: 'required', parallel_tool_calls: false });
  assert.equal(one.choices[0].message.tool_calls.length, 1);
});

test('auto: the hermes parser finds the call the model wrote', async () => {
  // The model is steered into a hermes call by a regex; the parser reads it back.
  const regex = '<tool_call>\\n\\{"name": "get_time", "arguments": \\{"zone": "(UTC|CET)"\\}\\}\\n</tool_call>';
  const body = { ...base, seed: 3, tool_choice: 'auto', structured_outputs: { regex } };
  const r = await client.chat.completions.create(body);
  const m = r.choices[0].message;
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  assert.equal(m.tool_calls.length, 1);
  assert.equal(m.tool_calls[0].function.name, 'get_time');
  checkCall(m.tool_calls[0]);
  const s = await streamed(body);
  assert.equal(s.finish, 'tool_calls');
  assert.equal(s.content, '');
  assert.equal(s.calls[0].function.arguments, m.tool_calls[0].function.arguments);
  // Without a call the text stays content.
  const plain = await client.chat.completions.create({ ...base, seed: 4, max_tokens: 8, structured_outputs: { regex: '[a-z]{3,6}' } });
  assert.match(plain.choices[0].message.content, /^[a-z]{3,6}$/);
  assert.deepEqual(plain.choices[0].message.tool_calls, []);
});

test('reasoning: qwen3 splits the answer off, and the constraint starts after </think>', async () => {
  // Thinking on: the model reasons freely until </think> (made likely here by a
  // logit bias on its id), then the regex holds.
  const body = { model: 'tiny', messages: [{ role: 'user', content: 'Think, then answer.' }], temperature: 1.0,
                 seed: 5, max_tokens: 60, logit_bias: { [THINK_END]: 11 }, structured_outputs: { regex: '[A-Z][a-z]{1,6}' } };
  const r = await client.chat.completions.create(body);
  const m = r.choices[0].message;
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.match(m.content, /^[A-Z][a-z]{1,6}$/);
  assert.equal(typeof (m.reasoning_content ?? ''), 'string');
  const s = await streamed(body);
  assert.equal(s.reasoning, m.reasoning_content ?? '');
  assert.equal(s.content, m.content);
  // Thinking off: the template closes the think block in the prompt; all is content.
  const off = await client.chat.completions.create({ ...body, logit_bias: {}, chat_template_kwargs: { enable_thinking: false } });
  assert.match(off.choices[0].message.content, /^[A-Z][a-z]{1,6}$/);
  assert.equal(off.choices[0].message.reasoning_content, undefined);
});

test('tool errors are 400s', async () => {
  const post = (body) => fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let r = await post({ ...base, tool_choice: { type: 'function', function: { name: 'nope' } } });
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /nope/);
  r = await post({ ...base, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', not: {} } } }],
                   tool_choice: 'required' });
  assert.equal(r.status, 400);
  assert.match((await r.json()).error.message, /'not'/);
});
