#!/usr/bin/env bash
# Every executable's --help exits 0 and explains its own flags (and only ours:
# no glog/gflags internals). Built with ccache path rewriting or without.
set -euo pipefail
bin=$1
expect() {  # expect "COMMAND..." FLAG...
  local cmd=$1
  shift
  local out
  out=$($cmd --help 2>&1) || { echo "FAIL: '$cmd --help' exited non-zero"; exit 1; }
  for flag in "$@"; do
    grep -q -- "--$flag" <<<"$out" || { echo "FAIL: '$cmd --help' does not list --$flag"; echo "$out" | head -20; exit 1; }
  done
  if grep -q -- "--logtostderr\|--flagfile" <<<"$out"; then echo "FAIL: '$cmd --help' lists library flags"; exit 1; fi
}
expect "$bin/llmserve serve" tensor-parallel-size max-model-len max-num-seqs enable-prefix-caching data-parallel-size api-key restart-policy admin-api-key config revision
expect "$bin/llmserve generate" prompts max-tokens temperature kv-cache-memory
expect "$bin/llmserve-engine" handshake-address data-parallel-rank
expect "$bin/llmserve-frontend" model port api-key max-request-body-bytes admin-api-key control-address
expect "$bin/llmserve-worker" rank world-size
expect "$bin/llmserve-coordinator" data-parallel-size
expect "$bin/llmserve keygen" out force
echo "every --help lists its flags"
