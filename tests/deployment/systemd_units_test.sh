#!/usr/bin/env bash
# deploy/systemd/: both units pass `systemd-analyze verify` (with ExecStart pointed at
# this build's launcher, since verify wants the binary to exist) with no warning at all;
# their hardening exposure is at most 3.0 (of 10) in `systemd-analyze security --offline`;
# every variable ExecStart uses is set in llmserve.env.example; llmserve.sysusers parses.
# Then both ExecStart lines, expanded from llmserve.env.example as systemd would
# (unit_exec.py; the demo model, the head at 127.0.0.1, a small KV cache), run as two
# "nodes" in a network namespace: the head must become healthy with all 4 ranks, serve a
# completion, and both must stop on SIGTERM. Skips (77) without systemd-analyze.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
src=$root/deploy/systemd
. "$root/tests/common/wait_until.sh"
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (Debian package systemd)"
  exit 77
fi
. "$root/tests/deployment/harness.sh"
own_netns=yes
enter_netns "$@" || own_netns=no
start_harness

for unit in "$src"/*.service; do
  name=$(basename "$unit")
  sed "s#/usr/local/bin/llmserve#$bin/llmserve#" "$unit" >"$tmp/$name"
  grep -q "ExecStart=$bin/llmserve serve" "$tmp/$name" || fail "$name: ExecStart is not /usr/local/bin/llmserve serve"
  # verify exits 0 on unknown keys and bad values, so any output at all is a failure.
  out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1) || fail "$name: verify failed: $out"
  [ -z "$out" ] || fail "$name: verify warned: $out"
  score=$(systemd-analyze security --offline=true "$tmp/$name" 2>&1 |
    sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
  # --threshold counts tenths: 30 is an exposure of 3.0.
  systemd-analyze security --offline=true --threshold=30 "$tmp/$name" >/dev/null 2>&1 ||
    fail "$name: exposure ${score:-?} is above 3.0"
  for key in User=llmserve Restart=on-failure NoNewPrivileges=yes EnvironmentFile=/etc/llmserve/llmserve.env; do
    grep -qx "$key" "$unit" || fail "$name: no $key"
  done
  # Every variable ExecStart expands must be set in the example environment file.
  for var in $(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | grep -o '\$[{]\?[A-Z_]*' | tr -d '${' | sort -u); do
    grep -q "^$var=" "$src/llmserve.env.example" || fail "$name: \$$var is not in llmserve.env.example"
  done
  echo "$name: verify clean, exposure $score"
done
grep -q -- '--headless' "$src/llmserve-engine.service" || fail "llmserve-engine.service does not start a headless node"
if grep -q -- '--headless' "$src/llmserve-head.service"; then fail "llmserve-head.service is headless"; fi

mkdir -p "$tmp/sysroot/etc"
cp "$src/llmserve.sysusers" "$tmp/llmserve.conf"
out=$(systemd-sysusers --dry-run --root="$tmp/sysroot" "$tmp/llmserve.conf" 2>&1) || fail "sysusers: $out"
grep -q "Creating user 'llmserve'" <<<"$out" || fail "sysusers creates no llmserve user: $out"
echo "llmserve.sysusers: creates the llmserve user"

if [ "$own_netns" = no ]; then
  echo "SKIP (live part): cannot make a network namespace to run the units' commands in"
  echo "PASS"
  exit 0
fi
"$bin/llmserve" keygen --out "$tmp/credentials" >/dev/null
start_unit() {  # start_unit UNIT: its ExecStart with its environment, as its own "node"
  local name=${1%.service} argv
  mapfile -t argv < <("$root/tests/deployment/unit_exec.py" "$src/$1" "$src/llmserve.env.example" "$tmp/credentials" \
    LLMSERVE_MODEL= LLMSERVE_HEAD_ADDRESS=127.0.0.1)
  [ "${argv[0]}" = /usr/local/bin/llmserve ] || fail "$1 does not run /usr/local/bin/llmserve"
  mkdir -p "$tmp/$name/run"
  (set -a && . "$src/llmserve.env.example" && set +a &&
    HOME=$tmp/$name LLMSERVE_RUNTIME_DIR=$tmp/$name/run XDG_CACHE_HOME=$tmp/cache exec setsid "$bin/llmserve" \
      "${argv[@]:1}" --kv-cache-memory 32M --max-model-len 512 --max-num-seqs 8 >"$tmp/$name.log" 2>&1) &
  pids[$name]=$!
}
start_unit llmserve-head.service
start_unit llmserve-engine.service
wait_until 90 http_ok http://127.0.0.1:8000/health || fail "the units' deployment did not become healthy"
completes http://127.0.0.1:8000 systemd || fail "completion failed"
wait_until 30 all_ranks_reported http://127.0.0.1:8000/metrics 4 || fail "not all 4 ranks are in /metrics"
for name in "${!pids[@]}"; do kill -TERM "${pids[$name]}"; done
for name in "${!pids[@]}"; do
  wait_until 30 gone -"${pids[$name]}" || fail "$name did not stop on SIGTERM"
  wait "${pids[$name]}" || fail "$name exited with $? on SIGTERM"
done
pids=()
echo "ExecStart of both units: a healthy 4-rank deployment (head ranks 0-1, headless 2-3), stopped by SIGTERM"
echo "PASS"
