// Helper of scripts/bench_tokenizer (node side):
//   node scripts/bench_tokenizer.js corpus OUT_FILE [BYTES]   writes the mixed corpus
//   node scripts/bench_tokenizer.js tiktoken CORPUS_FILE      times npm tiktoken (WASM) on it
// The corpus is seeded, so every run (and every machine) measures the same text.
'use strict';
const fs = require('fs');
const path = require('path');
const { makeGenerator } = require(path.join(__dirname, '..', 'tests', 'common', 'tokenizer_conformance', 'corpus.js'));

const [mode, file, bytesArg] = process.argv.slice(2);
if (mode === 'corpus') {
  const target = Number(bytesArg || 1 << 20);
  const gen = makeGenerator(7, []);  // no special tokens: plain mixed text
  const parts = [];
  let size = 0;
  for (let i = 0; size < target; ++i) {
    const kind = i % 12;
    if (kind === 7 || kind === 11) continue;  // special-token text and the long-input case
    const s = gen(i) + (i % 3 === 0 ? '\n' : ' ');
    parts.push(s);
    size += Buffer.byteLength(s);
  }
  let text = parts.join('');
  while (Buffer.byteLength(text) > target) text = text.slice(0, -1);
  if (/[\ud800-\udbff]$/.test(text)) text = text.slice(0, -1);
  fs.writeFileSync(file, text);
  console.error(`corpus: ${Buffer.byteLength(text)} bytes -> ${file}`);
} else if (mode === 'tiktoken') {
  const { get_encoding } = require('tiktoken');
  const text = fs.readFileSync(file, 'utf8');
  const bytes = Buffer.byteLength(text);
  const results = [];
  for (const name of ['o200k_base', 'cl100k_base']) {
    const enc = get_encoding(name);
    let tokens = enc.encode(text, [], []).length;  // warm-up (and JIT)
    let best = Infinity;
    const deadline = Date.now() + 4000;
    for (let rep = 0; rep < 20 && (rep < 3 || Date.now() < deadline); ++rep) {
      // CPU time of this process, like Google Benchmark's default, so that a
      // shared machine's load affects both sides alike.
      const c0 = process.cpuUsage();
      tokens = enc.encode(text, [], []).length;
      const c = process.cpuUsage(c0);
      const dt = (c.user + c.system) / 1e6;
      best = Math.min(best, dt);
    }
    enc.free();
    results.push({ name: `tiktoken/${name}`, mb_per_s: bytes / best / 1e6, tokens_per_s: tokens / best, tokens });
  }
  console.log(JSON.stringify(results));
} else {
  console.error('usage: node scripts/bench_tokenizer.js corpus OUT [BYTES] | tiktoken CORPUS');
  process.exit(2);
}
