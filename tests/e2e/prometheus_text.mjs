// A strict reader of the Prometheus text exposition format (0.0.4) for the
// end-to-end tests, written here from the format's specification: it asserts
// on any syntax error, a sample outside a declared family, a series shown
// twice, histogram buckets that are not cumulative or whose +Inf bucket
// differs from _count, and a negative counter.
import assert from 'node:assert/strict';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function parseValue(text) {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value '${text}'`);
  return Number(text);
}

// Returns { families: Map(name -> {type, help, samples: [{name, labels, value}]}) }; throws on bad text.
export function parsePrometheus(text) {
  assert.ok(text.endsWith('\n'), 'the scrape ends with a newline');
  const families = new Map();
  const seen = new Set();  // name + labels of every sample so far
  const familyOf = (sample) => {
    if (families.has(sample)) return sample;
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (sample.endsWith(suffix)) {
        const base = sample.slice(0, -suffix.length);
        if (families.get(base)?.type === 'histogram') return base;
      }
    }
    return null;
  };
  const lines = text.split('\n').slice(0, -1);
  lines.forEach((line, index) => {
    const where = `line ${index + 1} '${line}'`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return;  // a plain comment
      const [, kind, name, arg = ''] = m;
      assert.match(name, NAME, where);
      if (!families.has(name)) families.set(name, { type: null, help: null, samples: [] });
      const f = families.get(name);
      if (kind === 'TYPE') {
        assert.equal(f.type, null, `${where}: second TYPE`);
        assert.equal(f.samples.length, 0, `${where}: TYPE after samples`);
        assert.ok(['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(arg), where);
        f.type = arg;
      } else {
        assert.ok(!/\\[^\\n]|\\$/.test(arg.replace(/\\\\/g, '')), `${where}: bad escape in HELP`);
        f.help = arg;
      }
      return;
    }
    let i = 0;
    while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i])) i++;
    const name = line.slice(0, i);
    assert.match(name, NAME, where);
    const labels = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
        assert.ok(m, `${where}: bad label at ${i}`);
        i += m[0].length;
        let value = '';
        while (line[i] !== '"') {
          assert.ok(i < line.length, `${where}: unterminated label value`);
          if (line[i] === '\\') {
            const e = line[i + 1];
            assert.ok(e === '\\' || e === '"' || e === 'n', `${where}: bad escape`);
            value += e === 'n' ? '\n' : e;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        i++;
        assert.ok(!(m[1] in labels), `${where}: repeated label`);
        labels[m[1]] = value;
        if (line[i] === ',') i++;
        assert.ok(i < line.length, `${where}: unterminated label set`);
      }
      i++;
    }
    assert.equal(line[i], ' ', `${where}: no space before the value`);
    const value = parseValue(line.slice(i + 1).split(' ')[0]);
    const family = familyOf(name);
    assert.ok(family && families.get(family).type, `${where}: sample without TYPE`);
    const series = name + JSON.stringify(Object.entries(labels).sort());
    assert.ok(!seen.has(series), `${where}: a second sample of the same series`);
    seen.add(series);
    families.get(family).samples.push({ name, labels, value });
  });
  // Histograms: ascending le, cumulative counts, +Inf bucket == _count; counters >= 0.
  for (const [name, f] of families) {
    if (f.type === 'counter') for (const s of f.samples) assert.ok(s.value >= 0, `${name}: negative counter`);
    if (f.type !== 'histogram') continue;
    const series = new Map();
    const key = (labels) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
    for (const s of f.samples) {
      const k = key(s.labels);
      if (!series.has(k)) series.set(k, { buckets: [], count: null, sum: null });
      const e = series.get(k);
      if (s.name === `${name}_bucket`) e.buckets.push([parseValue(s.labels.le), s.value]);
      else if (s.name === `${name}_count`) e.count = s.value;
      else if (s.name === `${name}_sum`) e.sum = s.value;
      else assert.fail(`${name}: unexpected sample ${s.name}`);
    }
    for (const [k, e] of series) {
      assert.ok(e.buckets.length > 0 && e.count !== null && e.sum !== null, `${name}${k}: incomplete`);
      for (let j = 1; j < e.buckets.length; j++) {
        assert.ok(e.buckets[j][0] > e.buckets[j - 1][0], `${name}${k}: le not ascending`);
        assert.ok(e.buckets[j][1] >= e.buckets[j - 1][1], `${name}${k}: buckets not cumulative`);
      }
      assert.equal(e.buckets.at(-1)[0], Infinity, `${name}${k}: last bucket is +Inf`);
      assert.equal(e.buckets.at(-1)[1], e.count, `${name}${k}: +Inf bucket equals _count`);
    }
  }
  return families;
}

// The value of `name` whose labels include `match` (one series must match).
export function value(families, name, match = {}) {
  for (const f of families.values()) {
    const hits = f.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
    if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(match)} matches ${hits.length} series`);
    if (hits.length === 1) return hits[0].value;
  }
  throw new Error(`no sample ${name} ${JSON.stringify(match)}`);
}
