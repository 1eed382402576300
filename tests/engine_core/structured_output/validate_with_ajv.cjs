// Validates the (schema, output) pairs the property test dumps with the npm
// `ajv` package (JSON Schema 2020-12) and `ajv-formats`, an implementation
// independent of ours. Usage:
//   STRUCTURED_OUTPUT_DUMP=/tmp/pairs.jsonl build/tests/.../structured_output_tests --gtest_filter=Property*
//   node tests/engine_core/structured_output/validate_with_ajv.cjs /tmp/pairs.jsonl
// Exits 1 when any output is not JSON or does not validate.
"use strict";
const fs = require("fs");
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;

const file = process.argv[2];
if (!file) {
  console.error("usage: validate_with_ajv.cjs PAIRS.jsonl");
  process.exit(2);
}
let checked = 0;
let failed = 0;
for (const line of fs.readFileSync(file, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const { schema, output } = JSON.parse(line);
  checked++;
  let value;
  try {
    value = JSON.parse(output);
  } catch (e) {
    failed++;
    console.error(`not JSON: ${output}`);
    continue;
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    failed++;
    console.error(`invalid: ${output}\n  schema: ${JSON.stringify(schema)}\n  ${ajv.errorsText(validate.errors)}`);
  }
}
console.log(`${checked} outputs checked, ${failed} failed`);
process.exit(failed ? 1 : 0);
