// The constraints tests/e2e/structured_outputs.test.mjs sends: JSON schemas
// of the kinds agents and extraction pipelines use, regexes, choices and
// EBNF grammars. Strings are bounded (enum, pattern, format, maxLength) so
// that a random-weight model, which picks among the allowed tokens almost
// uniformly, finishes well within max_tokens.

export const SCHEMAS = {
  flag: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  person: {
    type: 'object',
    properties: { name: { type: 'string', pattern: '^[A-Z][a-z]{1,8}$' }, age: { type: 'integer', minimum: 0, maximum: 120 } },
    required: ['name', 'age'],
  },
  product: {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid' },
      in_stock: { type: 'boolean' },
      tags: { type: 'array', items: { enum: ['new', 'sale', 'eco'] }, maxItems: 3 },
    },
    required: ['id', 'in_stock', 'tags'],
  },
  address: {
    type: 'object',
    properties: {
      city: { enum: ['Paris', 'Berlin', 'Zürich', 'Tokyo'] },
      zip: { type: 'string', pattern: '^[0-9]{5}$' },
      floor: { type: ['integer', 'null'], minimum: -2, maximum: 40 },
    },
    required: ['city', 'zip', 'floor'],
  },
  event: {
    type: 'object',
    properties: { day: { type: 'string', format: 'date' }, at: { type: 'string', format: 'time' } },
    required: ['day', 'at'],
  },
  timestamp: { type: 'string', format: 'date-time' },
  host: {
    type: 'object',
    properties: { ip: { type: 'string', format: 'ipv4' }, port: { type: 'integer', minimum: 1, maximum: 65535 } },
    required: ['ip', 'port'],
  },
  sentiment: {
    type: 'object',
    properties: { label: { enum: ['positive', 'negative', 'neutral'] }, score: { type: 'integer', minimum: 0, maximum: 10 } },
    required: ['label', 'score'],
  },
  tool_call: {
    type: 'object',
    properties: {
      name: { const: 'get_weather' },
      arguments: {
        type: 'object',
        properties: { unit: { enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
        required: ['unit', 'days'],
      },
    },
    required: ['name', 'arguments'],
  },
  choice_or_count: { anyOf: [{ type: 'integer', minimum: 0, maximum: 99 }, { enum: ['none', 'many'] }] },
  one_of_shapes: {
    oneOf: [
      { type: 'object', properties: { kind: { const: 'circle' }, r: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['kind', 'r'] },
      { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'integer', minimum: 1, maximum: 9 } }, required: ['kind', 'side'] },
    ],
  },
  short_code: { type: 'string', minLength: 2, maxLength: 6 },
  tuple: {
    type: 'array',
    prefixItems: [{ type: 'integer', minimum: 0, maximum: 9 }, { type: 'boolean' }, { enum: ['x', 'y'] }],
    items: false,
  },
  scores: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 100 }, minItems: 1, maxItems: 4 },
  numbers: { type: 'array', items: { type: 'number' }, maxItems: 3 },
  linked: {
    $defs: {
      node: {
        type: 'object',
        properties: { v: { type: 'integer', minimum: 0, maximum: 9 }, next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } },
        required: ['v', 'next'],
      },
    },
    $ref: '#/$defs/node',
  },
  nested: {
    type: 'object',
    properties: {
      user: { type: 'object', properties: { id: { type: 'integer', minimum: 1, maximum: 999 }, admin: { type: 'boolean' } }, required: ['id', 'admin'] },
      roles: { type: 'array', items: { enum: ['read', 'write'] }, maxItems: 2 },
    },
    required: ['user', 'roles'],
  },
  all_of: {
    allOf: [
      { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 5 } }, required: ['a'] },
      { type: 'object', properties: { b: { type: 'boolean' } }, required: ['b'] },
    ],
  },
  nullable_enum: { type: 'object', properties: { color: { enum: ['red', 'green', null] } }, required: ['color'] },
};

export const REGEXES = {
  phone: '\\d{3}-\\d{4}',
  answer: '(yes|no|maybe)',
  word: '[A-Z][a-z]{2,6}',
  ipv4: '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}',
  hex: '[a-f0-9]{8}',
  clock: '(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [01]\\d:[0-5]\\d',
  decimal: '-?\\d{1,4}(\\.\\d{1,2})?',
};

export const CHOICES = {
  sentiment: ['positive', 'negative', 'neutral'],
  letter: ['A', 'B', 'C', 'D'],
  bool: ['true', 'false'],
  city: ['Paris', 'London', '東京'],
};

export const GRAMMARS = {
  sum: {
    grammar: 'root ::= "(" num (" + " num)* ")"\nnum ::= [0-9]{1,3}',
    check: (t) => /^\(\d{1,3}( \+ \d{1,3})*\)$/.test(t),
  },
  greeting: {
    grammar: 'root ::= greeting ", " name "!"\ngreeting ::= "Hello" | "Hi" | "Hey"\nname ::= [A-Z] [a-z]{1,5}',
    check: (t) => /^(Hello|Hi|Hey), [A-Z][a-z]{1,5}!$/.test(t),
  },
  brackets: {
    grammar: 'root ::= pair\npair ::= "[" pair? "]"',
    check: (t) => {
      const n = t.length / 2;
      return Number.isInteger(n) && n >= 1 && t === '['.repeat(n) + ']'.repeat(n);
    },
  },
  list: {
    grammar: 'root ::= item ("," item)*\nitem ::= "a" | "bb" | "ccc"  # comments are allowed',
    check: (t) => /^(a|bb|ccc)(,(a|bb|ccc))*$/.test(t),
  },
};
