// Deterministic (seeded) text generator for the tokenizer conformance tests
// and the tokenizer benchmark. Every string is valid Unicode and avoids the
// few characters where the JavaScript reference is known to differ from
// Hugging Face's Rust tokenizers (see README.md in this folder):
//   U+0085 (NEL)  : Oniguruma's \s matches it, JavaScript's does not.
//   U+FEFF (BOM)  : JavaScript's \s matches it, Oniguruma's does not.
//   U+017F, U+212A: (?i:'s) case-folds them to s/k in Oniguruma, not in the JS port.
'use strict';

function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('the of and to in is was that for it with as his on be at by had are but from or ' +
  'have an they which one you were her all she there would their we him been has when who will ' +
  'more no if out so said what up its about into than them can only other new some could time ' +
  'these two may then do first any my now such like our over man me even most made after also ' +
  'did many before must through back years where much your way well down should because each just ' +
  'those people Mr how too little state good very make world still own see men work long get here ' +
  'between both life being under never day same another know while last might us great old year ' +
  'tokenizer serving engine request latency throughput scheduler kernel cache prefix decode ' +
  'Hello World NASA OpenAI GPU CUDA naïve café résumé Zürich Ångström façade coöperate ' +
  "don't can't I'm you're we've they'll she'd it's WON'T I'LL He'S").split(' ');

const CODE = [
  'def f(x):\n    return x * 2\n',
  'for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}\n',
  'const x = await fetch(`/api/v1/${id}`);',
  '#include <vector>\nint main() { return 0; }\n',
  'SELECT id, name FROM users WHERE age >= 21 ORDER BY name;',
  '{"key": [1, 2.5, -3e10, true, null], "nested": {"a": "b"}}',
  'if x != None and y == 0:\n        pass\n    else:\n        raise ValueError("bad")\n',
  '<div class="row"><span id=\'x\'>&nbsp;</span></div>',
  'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }',
  'x = [i**2 for i in range(10) if i % 3 == 0]  # squares',
  '$ ls -la /usr/local/bin | grep -E "^d" && echo done\n',
  'std::unordered_map<std::string, int32_t> m{{"a", 1}};',
];

const SCRIPTS = [
  [0x4e00, 0x9fa5],  // CJK unified ideographs (BMP, long-assigned)
  [0x3041, 0x3096],  // hiragana
  [0x30a1, 0x30fa],  // katakana
  [0xac00, 0xd7a3],  // hangul syllables
  [0x0391, 0x03a9],  // Greek capitals
  [0x03b1, 0x03c9],  // Greek small
  [0x0410, 0x044f],  // Cyrillic
  [0x05d0, 0x05ea],  // Hebrew
  [0x0627, 0x064a],  // Arabic letters
  [0x0905, 0x0939],  // Devanagari
  [0x0e01, 0x0e2e],  // Thai
  [0x00c0, 0x00ff],  // Latin-1 letters
  [0x0100, 0x017e],  // Latin Extended-A (stops before U+017F)
];

const EMOJI = ['😀', '😂', '🤖', '🚀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇯🇵', '🇺🇸', '❤️', '✨', '🔥', '🧑🏿‍💻',
  '🙏', '🎉', '💡', '🐍', '🦀', '1️⃣', '©', '™', '⌘', '∑', '√', '∞', '≠', '→', '★'];
const COMBINING = ['\u0301', '\u0300', '\u0308', '\u0303', '\u0327', '\u030a', '\u0323', '\u0331',
  '\u20d7', '\u0345', '\u0651', '\u093c'];
const SPACES = [' ', '  ', '   ', '\t', '\n', '\n\n', '\r\n', ' \n', '\n ', '\u00a0', '\u3000',
  '\u2003', '\u200b', '\u2028', '    ', '\t\t', '\n\n\n', ' \t \n'];
const PUNCT = '.,;:!?\'"()[]{}<>-_=+*/\\|@#$%^&~`…–—«»¿¡「」。、'.split('');

function makeGenerator(seed, specialTokens) {
  const rnd = mulberry32(seed);
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const scriptChars = (n) => {
    const [lo, hi] = pick(SCRIPTS);
    let s = '';
    for (let i = 0; i < n; ++i) s += String.fromCodePoint(int(lo, hi));
    return s;
  };
  const prose = (n) => {
    let s = '';
    for (let i = 0; i < n; ++i) {
      s += (i ? ' ' : '') + pick(WORDS);
      if (rnd() < 0.12) s += pick([',', '.', '!', '?', ';', ':']);
    }
    return s;
  };
  const digits = () => {
    const k = rnd();
    if (k < 0.3) return String(int(0, 10 ** int(1, 9)));
    if (k < 0.5) return (rnd() * 10 ** int(0, 6)).toFixed(int(0, 5));
    if (k < 0.7) return `${int(1, 12)}/${int(1, 31)}/${int(1900, 2100)}`;
    if (k < 0.85) return '0'.repeat(int(1, 5)) + String(int(0, 99999)) + '1234567890'.slice(int(0, 9));
    return `+1 (${int(100, 999)}) ${int(100, 999)}-${int(1000, 9999)}`;
  };
  const combining = () => {
    let s = '';
    const n = int(1, 6);
    for (let i = 0; i < n; ++i) {
      s += pick('aeiouAEIOUnNcCyzsq'.split('')) + pick(COMBINING);
      if (rnd() < 0.3) s += pick(COMBINING);
      if (rnd() < 0.3) s += ' ';
    }
    return s;
  };
  const whitespace = () => {
    let s = '';
    const n = int(1, 6);
    for (let i = 0; i < n; ++i) s += pick(SPACES) + (rnd() < 0.6 ? pick(WORDS) : '');
    return s;
  };
  const special = () => {
    if (specialTokens.length === 0) return prose(3);
    let s = '';
    const n = int(1, 4);
    for (let i = 0; i < n; ++i) {
      s += pick(['', ' ', '\n', 'x', 'Hello ', '  ']) + pick(specialTokens) + pick(['', ' ', '\n', 'world', '.']);
    }
    return s;
  };
  const atoms = [
    () => prose(int(1, 25)),
    () => pick(CODE),
    whitespace,
    digits,
    () => scriptChars(int(1, 30)),
    () => pick(EMOJI) + (rnd() < 0.5 ? pick(EMOJI) : ''),
    combining,
    special,
    () => pick(PUNCT) + pick(PUNCT) + (rnd() < 0.5 ? pick(WORDS) : ''),
    () => "'" + pick(['s', 't', 're', 've', 'm', 'll', 'd', 'S', 'T', 'RE', 'Ve', 'LL', 'D', 'x']),
  ];
  const mixed = (n) => {
    let s = '';
    for (let i = 0; i < n; ++i) {
      s += pick(atoms)();
      if (rnd() < 0.5) s += pick([' ', '', '\n', ', ', pick(SPACES)]);
    }
    return s;
  };
  // The i-th case: a fixed rotation of categories, then mixtures and (every
  // 24th case) a long input of 1-6 KB.
  return function next(i) {
    const kind = i % 12;
    if (kind < atoms.length) return atoms[kind]();
    if (kind === 10 || i % 24 === 11) return mixed(int(2, 12));
    let s = '';
    const target = int(1000, 6000);
    while (Buffer.byteLength(s) < target) s += mixed(8) + pick(['\n', '\n\n', ' ']);
    return s;
  };
}

module.exports = { makeGenerator, mulberry32 };
