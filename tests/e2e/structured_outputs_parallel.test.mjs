// End-to-end: structured outputs on every data-parallel rank and through
// tensor-parallel workers (`--data-parallel-size 2 --tensor-parallel-size 2`:
// two engines, each with two workers that apply the bitmask in step), with
// stop strings and logprobs, on a tiny random-weight Qwen3 at temperature 1.
// Run by ctest:
//   node --test tests/e2e/structured_outputs_parallel.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import OpenAI from 'openai';
import { makeTinyModel, freePort, startServe, waitHealthy, stopServe, logCount } from './serve_harness.mjs';
import { SCHEMAS, CHOICES } from './structured_outputs_corpus.mjs';

const require = createRequire(import.meta.url);
const Ajv = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats').default;

const work = mkdtempSync(join(tmpdir(), 'llmserve-so-par-'));
const modelDir = join(work, 'tiny');
let server;
let client;

before(async () => {
  makeTinyModel(modelDir, 13);
  const port = await freePort();
  server = startServe(modelDir, port, ['--data-parallel-size', '2', '--tensor-parallel-size', '2',
                                       '--max-num-seqs', '8',
                                       '--structured-outputs-config', '{"disable_any_whitespace": true}']);
  await waitHealthy(server, 120_000);
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

test('JSON schemas on both ranks through TP workers: every output valid', async () => {
  const names = Object.keys(SCHEMAS);
  const jobs = Array.from({ length: 32 }, async (_, i) => {
    const name = names[i % names.length];
    const r = await client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'user', content: `request ${i}` }], temperature: 1.0, seed: i, max_tokens: 400,
      response_format: { type: 'json_schema', json_schema: { name, schema: SCHEMAS[name] } },
    });
    const text = r.choices[0].message.content;
    assert.equal(r.choices[0].finish_reason, 'stop', `${name}: ${text}`);
    const validate = ajv.compile(SCHEMAS[name]);
    assert.ok(validate(JSON.parse(text)), `${name}: ${ajv.errorsText(validate.errors)}\n${text}`);
  });
  await Promise.all(jobs);
  // Each engine loads the grammar vocabulary when it compiles its first grammar.
  assert.equal(logCount(server, /structured outputs: vocabulary of \d+ tokens ready/), 2,
               `both ranks must have compiled grammars\n${server.log}`);
});

test('a stop string cuts a constrained output; logprobs come with it', async () => {
  const r = await client.completions.create({
    model: 'tiny', prompt: 'letters', temperature: 1.0, seed: 3, max_tokens: 64, stop: ['b'],
    structured_outputs: { regex: '[abc]{40}' }, logprobs: 2,
  });
  const text = r.choices[0].text;
  assert.match(text, /^[ac]*$/, 'the output stops before the first b');
  assert.ok(text.length < 40, `a b among 40 random letters is all but certain: ${text}`);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const lp = r.choices[0].logprobs;
  assert.ok(lp.tokens.length >= 1 && lp.token_logprobs.every((x) => Number.isFinite(x) && x <= 0), JSON.stringify(lp));

  const choices = CHOICES[Object.keys(CHOICES)[0]];
  const c = await client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'pick' }], temperature: 1.0, seed: 4,
    guided_choice: choices, logprobs: true, top_logprobs: 3,
  });
  assert.ok(choices.includes(c.choices[0].message.content), c.choices[0].message.content);
  for (const t of c.choices[0].logprobs.content) {
    assert.ok(t.logprob <= 0 && t.top_logprobs.length === 3, JSON.stringify(t));
  }
});
