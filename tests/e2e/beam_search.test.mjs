// End-to-end: vLLM's beam search (`use_beam_search`, an extra body field of
// the official client) on a tiny random-weight Qwen3. The beams, their order,
// finish reasons and logprobs are those scripts/ref_forward.py --beam-width
// finds by numpy over the same weights; chat answers what completions do for
// the rendered prompt, streamed or not; usage counts the prompt once and the
// returned beams' tokens; fields beam search cannot honour are 400s naming
// them; a client that goes away mid-search stops it.
// Run by ctest:
//   node --test tests/e2e/beam_search.test.mjs   (LLMSERVE_BIN = the build's bin/)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { bin, freePort, startServe, waitHealthy, waitForLog, stopServe } from './serve_harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'llmserve-beam-'));
const model = join(work, 'm');
let server;
let client;
let baseURL;

// Token-id prompts, so numpy sees exactly what the server does.
const prompts = [[9707, 11, 1246, 525, 498, 30], [785, 3974, 13876, 38835], [40], [9707, 11, 151645]];
// The model's EOS is made a token this model often predicts ('_Q', id 13337), so
// beams end early and length_penalty decides between ended and live ones.
const eosText = '_Q';

before(async () => {
  // Weights large enough that the beams' scores are far apart (no near-ties).
  execFileSync(join(bin, 'llmserve'), ['make-model', '--preset', 'tiny', '--arch', 'qwen3', '--seed', '13',
                                       '--std', '0.15', '--norm-jitter', '0.2', '--out', model], { stdio: 'ignore' });
  const configFile = join(model, 'tokenizer_config.json');
  writeFileSync(configFile, JSON.stringify({ ...JSON.parse(readFileSync(configFile, 'utf8')), eos_token: eosText }));
  const port = await freePort();
  server = startServe(model, port, ['--enable-log-requests']);
  await waitHealthy(server);
  baseURL = `http://127.0.0.1:${port}`;
  client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120_000 });
});

after(async () => {
  if (server) {
    const exit = await stopServe(server);
    assert.equal(exit.code, 0, `launcher exit code after SIGTERM\n${server.log}`);
  }
  rmSync(work, { recursive: true, force: true });
});

// The tokenizer's EOS id (tokenizer_config's eos_token), which ends a beam.
function eosTokenId() {
  const config = JSON.parse(readFileSync(join(model, 'tokenizer_config.json'), 'utf8'));
  const eos = typeof config.eos_token === 'string' ? config.eos_token : config.eos_token.content;
  const tokenizer = JSON.parse(readFileSync(join(model, 'tokenizer.json'), 'utf8'));
  const added = tokenizer.added_tokens.find((t) => t.content === eos);
  return added ? added.id : tokenizer.model.vocab[eos];
}

const haveNumpy = () => {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import numpy']);
    return true;
  } catch {
    return false;
  }
};

// ref_forward.py --beam-width: [{token_ids, cum_logprob, finish_reason}], best first.
function referenceBeams(prompt, { n, maxTokens, lengthPenalty, ignoreEos }) {
  const out = execFileSync('/usr/bin/python3', [
    'scripts/ref_forward.py', model, '--tokens', prompt.join(','), '--beam-width', String(n),
    '--max-tokens', String(maxTokens), '--eos-token-id', String(eosTokenId()),
    '--length-penalty', String(lengthPenalty), ...(ignoreEos ? ['--ignore-eos'] : [])], { encoding: 'utf8' });
  return out.trim().split('\n').map((l) => JSON.parse(l));
}

const beamSearch = (prompt, { n, maxTokens, lengthPenalty, ignoreEos = false, includeStop = false }) =>
  client.completions.create({
    model: 'tiny', prompt, n, max_tokens: maxTokens, temperature: 0, use_beam_search: true,
    length_penalty: lengthPenalty, ignore_eos: ignoreEos, include_stop_str_in_output: includeStop,
    return_token_ids: true, logprobs: 1, return_tokens_as_token_ids: true,
  });

test('the beams and their order are those numpy finds over the same weights', async (t) => {
  if (!haveNumpy()) {
    t.skip('/usr/bin/python3 with numpy is not available');
    return;
  }
  const eos = eosTokenId();
  const settings = [
    { n: 3, maxTokens: 5, lengthPenalty: 1.0 },
    { n: 3, maxTokens: 4, lengthPenalty: 2.0 },
    { n: 2, maxTokens: 4, lengthPenalty: 0.0 },
    { n: 2, maxTokens: 4, lengthPenalty: 1.0, ignoreEos: true },
    { n: 3, maxTokens: 4, lengthPenalty: 1.0, includeStop: true },
  ];
  const finishes = new Set();
  const orders = new Map();  // prompt 3's beams by length_penalty
  // numpy first: a pause of seconds between requests could meet the server's keep-alive timeout.
  const wants = settings.map((s) => prompts.map((p) => referenceBeams(p, s)));
  for (const [k, s] of settings.entries()) {
    const answers = await Promise.all(prompts.map((p) => beamSearch(p, s)));  // searches run side by side
    prompts.forEach((prompt, i) => {
      const want = wants[k][i];
      // include_stop_str_in_output keeps the EOS in token_ids (vLLM), not in the ranking.
      const wantIds = want.map((b) => (s.includeStop && b.finish_reason === 'stop' ? [...b.token_ids, eos] : b.token_ids));
      const got = answers[i].choices;
      const what = `prompt ${i}, ${JSON.stringify(s)}`;
      assert.deepEqual(got.map((c) => c.token_ids), wantIds, what);
      assert.deepEqual(got.map((c) => c.finish_reason), want.map((b) => b.finish_reason), what);
      assert.deepEqual(got.map((c) => c.stop_reason), want.map((b) => (b.finish_reason === 'stop' ? eos : null)), what);
      assert.deepEqual(got.map((c) => c.index), want.map((_, k) => k), what);
      assert.equal(answers[i].usage.prompt_tokens, prompt.length, what);
      assert.equal(answers[i].usage.completion_tokens, wantIds.reduce((sum, ids) => sum + ids.length, 0), what);
      got.forEach((c, k) => {
        finishes.add(c.finish_reason);
        // logprobs: the chosen tokens, whose logprobs add up to numpy's cumulative logprob
        // (an EOS not kept in the tokens is not in them either).
        assert.deepEqual(c.logprobs.tokens, c.token_ids.map((id) => `token_id:${id}`), what);
        if (c.finish_reason === 'stop' && !s.includeStop) return;
        const sum = c.logprobs.token_logprobs.reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - want[k].cum_logprob) < 1e-4, `${what}: ${sum} vs ${want[k].cum_logprob}`);
      });
      if (i === 3 && !s.ignoreEos && !s.includeStop) orders.set(s.lengthPenalty, JSON.stringify(want));
    });
  }
  assert.deepEqual([...finishes].sort(), ['length', 'stop'], 'beams both ended by EOS and cut by max_tokens');
  assert.notEqual(orders.get(1.0), orders.get(2.0), 'length_penalty changes which beams win');
});

test('n distinct beams come back, each text that of its tokens', async () => {
  const r = await beamSearch(prompts[0], { n: 4, maxTokens: 6, lengthPenalty: 1.0 });
  assert.equal(r.choices.length, 4);
  assert.equal(new Set(r.choices.map((c) => JSON.stringify(c.token_ids))).size, 4, 'four different beams');
  for (const c of r.choices) {
    const ids = c.token_ids;  // no EOS in them without include_stop_str_in_output
    if (ids.some((id) => id >= 151643)) continue;  // special tokens: /detokenize keeps them, the text not
    const detok = await (await fetch(`${baseURL}/detokenize`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', tokens: ids }),
    })).json();
    assert.equal(c.text, detok.prompt);
  }
});

test('chat beam search answers what completions give for the rendered prompt', async () => {
  const messages = [{ role: 'user', content: 'Name a colour.' }];
  const rendered = await (await fetch(`${baseURL}/tokenize`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', messages, add_generation_prompt: true }),
  })).json();
  const chat = await client.chat.completions.create({
    model: 'tiny', messages, n: 2, max_tokens: 4, temperature: 0, use_beam_search: true });
  const completion = await client.completions.create({
    model: 'tiny', prompt: rendered.tokens, n: 2, max_tokens: 4, temperature: 0, use_beam_search: true });
  assert.equal(chat.object, 'chat.completion');
  assert.deepEqual(chat.choices.map((c) => c.message.content), completion.choices.map((c) => c.text));
  assert.equal(chat.usage.prompt_tokens, rendered.tokens.length);
  assert.equal(chat.usage.completion_tokens, completion.usage.completion_tokens);
  // Streamed (vLLM streams chat beam search): every role chunk, then each whole message.
  const stream = await client.chat.completions.create({
    model: 'tiny', messages, n: 2, max_tokens: 4, temperature: 0, use_beam_search: true, stream: true,
    stream_options: { include_usage: true } });
  const content = ['', ''];
  const finish = [null, null];
  let usage;
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      content[c.index] += c.delta.content ?? '';
      finish[c.index] = c.finish_reason ?? finish[c.index];
    }
    usage = chunk.usage ?? usage;
  }
  assert.deepEqual(content, chat.choices.map((c) => c.message.content));
  assert.deepEqual(finish, chat.choices.map((c) => c.finish_reason));
  assert.deepEqual(usage, chat.usage);
});

test('fields beam search cannot honour are 400s that name them', async () => {
  const refused = async (body, param) => {
    await assert.rejects(client.completions.create({ model: 'tiny', prompt: 'Hi', use_beam_search: true, ...body }),
                         (e) => e.status === 400 && e.error?.param === param, `${param} is refused`);
  };
  await refused({ stream: true }, 'stream');
  await refused({ stop_token_ids: [13] }, 'stop_token_ids');
  await refused({ stop: ['.'] }, 'stop');
  await refused({ top_p: 0.5 }, 'top_p');
  await refused({ n: 11 }, 'n');  // 22 logprobs a step > --max-logprobs 20
  await assert.rejects(client.chat.completions.create({
    model: 'tiny', messages: [{ role: 'user', content: 'Hi' }], use_beam_search: true,
    response_format: { type: 'json_object' } }), (e) => e.status === 400 && e.error?.param === 'structured_outputs');
  await assert.rejects(client.completions.create({ model: 'tiny', prompt: 'Hi', length_penalty: 2 }),
                       (e) => e.status === 400 && e.error?.param === 'length_penalty');
});

test('a client that goes away stops the search', async () => {
  const controller = new AbortController();
  const pending = client.completions.create({
    model: 'tiny', prompt: prompts[0], n: 4, max_tokens: 400, temperature: 0, use_beam_search: true,
    request_id: 'beam-abort' }, { signal: controller.signal });
  // Leave once the search has started (400 steps of 4 requests take far longer).
  assert.ok(await waitForLog(server, /Received request \S*beam-abort/, 30_000), server.log);
  controller.abort();
  await assert.rejects(pending);
  assert.ok(await waitForLog(server, /client went away; aborting beam search \S*beam-abort/, 30_000), server.log);
  const r = await beamSearch(prompts[2], { n: 2, maxTokens: 2, lengthPenalty: 1.0 });
  assert.equal(r.choices.length, 2, 'the server still serves');
});
