// End-to-end: structured outputs through the official `openai` client against
// `llmserve serve` on a tiny random-weight Qwen3 model (Qwen3's real 151k
// tokenizer) at temperature 1. Every constrained output must be valid: JSON
// outputs are checked by an independent validator (ajv + ajv-formats),
// regexes by JavaScript's RegExp, choices by membership, grammars by an
// equivalent JavaScript check. Bad constraints are 400s and the server keeps
// serving. Run by ctest:
//   node --test tests/e2e/structured_outputs.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe } from './serve_harness.mjs';
import { SCHEMAS, REGEXES, CHOICES, GRAMMARS } from './structured_outputs_corpus.mjs';

const require = createRequire(import.meta.url);
const Ajv = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

const work = mkdtempSync(join(tmpdir(), 'llmserve-so-'));
const modelDir = join(work, 'tiny');
let server;
let port;
let client;

before(async () => {
  makeTinyModel(modelDir, 11);
  port = await freePort();
  // Compact JSON: a random-weight model would otherwise spend its tokens on
  // the many whitespace tokens free JSON whitespace allows.
  server = startServe(modelDir, port, ['--max-num-seqs', '16',
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

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

// One constrained request per case: how it is sent and how its output is checked.
function cases() {
  const out = [];
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const validate = ajv.compile(schema);
    out.push({
      name: `schema ${name}`,
      chat: { response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } } },
      completion: { structured_outputs: { json: schema } },
      check: (text) => {
        const value = JSON.parse(text);
        assert.ok(validate(value), `${name}: ${ajv.errorsText(validate.errors)}\n${text}`);
      },
    });
  }
  for (const [name, re] of Object.entries(REGEXES)) {
    const full = new RegExp(`^(?:${re})$`, 'u');
    out.push({
      name: `regex ${name}`,
      chat: { structured_outputs: { regex: re } },
      completion: { guided_regex: re },
      check: (text) => assert.match(text, full),
    });
  }
  for (const [name, choices] of Object.entries(CHOICES)) {
    out.push({
      name: `choice ${name}`,
      chat: { guided_choice: choices },
      completion: { structured_outputs: { choice: choices } },
      check: (text) => assert.ok(choices.includes(text), `${JSON.stringify(text)} is not one of the choices`),
    });
  }
  for (const [name, { grammar, check }] of Object.entries(GRAMMARS)) {
    out.push({
      name: `grammar ${name}`,
      chat: { structured_outputs: { grammar } },
      completion: { guided_grammar: grammar },
      check: (text) => assert.ok(check(text), `${JSON.stringify(text)} does not match grammar ${name}`),
    });
  }
  return out;
}

// Sends case `c` as request number `i`: chat or completion, streamed or not.
async function run(c, i) {
  const chat = i % 2 === 0;
  const stream = i % 4 < 2;
  const common = { model: 'tiny', temperature: 1.0, seed: i, max_tokens: 400 };
  let text = '';
  let finish = null;
  if (chat) {
    const body = { ...common, ...c.chat, messages: [{ role: 'user', content: `Case ${i}: ${c.name}` }] };
    if (stream) {
      for await (const chunk of await client.chat.completions.create({ ...body, stream: true })) {
        for (const ch of chunk.choices) {
          text += ch.delta.content ?? '';
          finish = ch.finish_reason ?? finish;
        }
      }
    } else {
      const r = await client.chat.completions.create(body);
      text = r.choices[0].message.content;
      finish = r.choices[0].finish_reason;
    }
  } else {
    const body = { ...common, ...c.completion, prompt: `Case ${i}: ${c.name}\n` };
    if (stream) {
      for await (const chunk of await client.completions.create({ ...body, stream: true })) {
        for (const ch of chunk.choices) {
          text += ch.text;
          finish = ch.finish_reason ?? finish;
        }
      }
    } else {
      const r = await client.completions.create(body);
      text = r.choices[0].text;
      finish = r.choices[0].finish_reason;
    }
  }
  return { text, finish };
}

test('200 constrained requests at temperature 1 all give valid outputs', async () => {
  const all = cases();
  assert.ok(all.length >= 30, `only ${all.length} distinct constraints`);
  const total = 200;
  const failures = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const c = all[i % all.length];
      const { text, finish } = await run(c, i);
      try {
        assert.equal(finish, 'stop', `finished by ${finish} after ${text.length} characters`);
        c.check(text);
      } catch (e) {
        failures.push(`#${i} ${c.name}: ${e.message}\n  output: ${JSON.stringify(text).slice(0, 300)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  assert.deepEqual(failures, [], `${failures.length} of ${total} outputs invalid:\n${failures.join('\n')}`);
});

test('n > 1 and a greedy constrained request', async () => {
  const r = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'pick' }], temperature: 1.0, n: 3, seed: 5,
    response_format: { type: 'json_schema', json_schema: { name: 'flag', schema: SCHEMAS.flag } },
  });
  const validate = ajv.compile(SCHEMAS.flag);
  assert.equal(r.choices.length, 3);
  for (const ch of r.choices) assert.ok(validate(JSON.parse(ch.message.content)), ch.message.content);
  const g = await client.completions.create({ model: 'tiny', prompt: 'x', temperature: 0, max_tokens: 20,
                                              structured_outputs: { choice: ['alpha', 'beta', 'gamma'] } });
  assert.ok(['alpha', 'beta', 'gamma'].includes(g.choices[0].text), g.choices[0].text);
});

test('bad constraints are 400s with the reason, and the server keeps serving', async () => {
  const bad = [
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: 3 } } } },
     /properties/],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', contentEncoding: 'base64' } } } },
     /contentEncoding/],
    [{ structured_outputs: { regex: 'a(b' } }, /invalid regex/],
    [{ structured_outputs: { grammar: 'root ::= "x' } }, /invalid grammar/],
    [{ response_format: { type: 'yaml' } }, /response_format type/],
    [{ structured_outputs: { json: '{"type": ' } }, /invalid JSON schema/],
  ];
  for (const [fields, re] of bad) {
    const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], ...fields }),
    });
    assert.equal(r.status, 400, JSON.stringify(fields));
    const body = await r.json();
    assert.equal(body.error.type, 'BadRequestError');
    assert.equal(body.error.code, 400);
    assert.match(body.error.message, re);
  }
  const ok = await client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: 4, temperature: 0 });
  assert.equal(ok.choices.length, 1);
});
