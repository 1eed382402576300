// Load for the multi-node test: N chat/completion requests (a mix of streaming
// and not, varied prompt lengths) through the official openai client at a
// fixed concurrency. Every request must succeed; the rank that served each one
// comes from the `x-data-parallel-rank` response header, and every rank must
// serve between half and twice the mean share. (Not equal shares: the score
// balances prompt tokens, not request counts, and the prompts differ; the two
// frontends see each other's requests only through the coordinator's
// snapshots, which a 240-request burst outruns; and the ranks share two cores.
// At the session-8 start, a 25% bound failed 3 runs in 8, with shares from
// 41 to 91 of a mean of 60.)
//   node multinode_load.mjs BASE_URL NUM_REQUESTS NUM_RANKS [CONCURRENCY=16]
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_PATH ? `${process.env.NODE_PATH}/` : import.meta.url);
const { default: OpenAI } = await import(require.resolve('openai'));

const [baseURL, total, ranks, concurrency] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5] ?? 16)];
const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, timeout: 60_000 });
const served = new Array(ranks).fill(0);
let failures = 0;
let next = 0;

function servedBy(response) {
  const rank = Number(response.headers.get('x-data-parallel-rank'));
  assert.ok(Number.isInteger(rank) && rank >= 0 && rank < ranks, `bad rank header: ${rank}`);
  served[rank] += 1;
}

async function one(i) {
  const prompt = 'tell me about the number ' + String(i) + ' '.repeat(i % 7) + 'please '.repeat(1 + (i % 23));
  const params = { model: 'tiny', prompt, max_tokens: 8, temperature: 0, ignore_eos: true };
  if (i % 2 === 0) {
    const { data, response } = await client.completions.create(params).withResponse();
    servedBy(response);
    assert.equal(data.choices[0].finish_reason, 'length');
    assert.equal(data.usage.completion_tokens, 8);
  } else {
    const { data: stream, response } = await client.completions.create({ ...params, stream: true }).withResponse();
    servedBy(response);
    let chunks = 0;
    for await (const chunk of stream) chunks += chunk.choices.length > 0 ? 1 : 0;
    assert.ok(chunks >= 1, 'a stream with no chunks');
  }
}

async function worker() {
  while (next < total) {
    const i = next++;
    try {
      await one(i);
    } catch (e) {
      failures += 1;
      console.error(`request ${i} failed: ${e.message}`);
    }
  }
}

const started = Date.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const mean = total / ranks;
console.log(`${total} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${failures} failed; per rank: ${served.join(' ')}`);
assert.equal(failures, 0, 'every request must succeed');
for (let r = 0; r < ranks; ++r) {
  assert.ok(served[r] >= 0.5 * mean && served[r] <= 2 * mean, `rank ${r} served ${served[r]}, mean ${mean}`);
}
console.log('every rank between half and twice the mean');
