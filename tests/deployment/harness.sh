# What the deployment tests share (sourced): a network namespace of their own, and the
# process groups they start, stopped on exit.

# enter_netns "$@": runs the calling script again in a new network namespace (as root,
# or as a mapped root) with loopback up there, unless it already runs in one. Returns 1
# when no namespace can be made.
enter_netns() {
  if [ -n "${LLMSERVE_DEPLOYMENT_NS:-}" ]; then
    ip link set lo up
    return 0
  fi
  local ns=(unshare --net)
  [ "$(id -u)" = 0 ] || ns=(unshare --map-root-user --net)
  "${ns[@]}" true 2>/dev/null || return 1
  LLMSERVE_DEPLOYMENT_NS=1 exec "${ns[@]}" "$0" "$@"
}

# start_harness: a scratch directory ($tmp) and the process groups started
# (pids[NAME]=PID of a setsid leader), both cleaned up on exit; fail prints the logs in
# $tmp and exits 1. Call it after enter_netns, which replaces the process.
start_harness() {
  tmp=$(mktemp -d)
  declare -gA pids=()
  trap cleanup EXIT
}
cleanup() {
  for name in "${!pids[@]}"; do kill -TERM -- -"${pids[$name]}" 2>/dev/null || true; done
  for name in "${!pids[@]}"; do
    wait_until 10 gone -"${pids[$name]}" || kill -KILL -- -"${pids[$name]}" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log; do if [ -e "$f" ]; then echo "== $f"; tail -n 20 "$f"; fi; done
  exit 1
}

# all_ranks_reported URL N: /metrics at URL has num_requests_running for engines 0..N-1
# (an engine's gauges appear once the frontend has its first stats).
all_ranks_reported() {
  local metrics rank
  metrics=$(curl -fsS --max-time 5 "$1") || return 1
  for ((rank = 0; rank < $2; rank++)); do
    grep -q "^vllm:num_requests_running{.*engine=\"$rank\"" <<<"$metrics" || return 1
  done
}

# completes BASE_URL PROMPT: one 4-token completion answered 200. Asked once /health is
# ok: API servers sharing a port listen only once their engines are ready, so whichever
# takes the connection serves it.
completes() {
  curl -fsS --max-time 30 -H 'content-type: application/json' -o /dev/null \
    -d "{\"prompt\": \"$2\", \"max_tokens\": 4}" "$1/v1/completions" 2>/dev/null
}
