#!/usr/bin/env bash
# Two "nodes" as network namespaces joined by a veth pair, made here (the
# second also with its own runtime directory, so no Unix socket is shared), secured by a
# cluster key: first a node with the wrong key must be refused and the refusal
# logged; then the real deployment: the head
# (two frontends sharing one port, DP ranks 0-1, handshake server) and a
# headless node (ranks 2-3) that dials it over TCP, with haproxy in front of the
# head's frontends. A few hundred requests through the official openai client
# must all succeed, and every rank must serve between half and twice the mean share.
# Needs root (ip netns) and haproxy; skips with exit 77 otherwise.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
. "$root/tests/common/wait_until.sh"
if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1; then echo "SKIP: needs root and ip netns"; exit 77; fi
if ! command -v haproxy >/dev/null; then echo "SKIP: haproxy is not installed (scripts/setup installs it)"; exit 77; fi

id=$$
head_ns=llh$id node_ns=lln$id
head_ip=10.$((id % 200 + 20)).$((id / 200 % 250)).1
node_ip=${head_ip%.1}.2
tmp=$(mktemp -d)
# The launchers keep their ipc:// sockets under $LLMSERVE_RUNTIME_DIR; the
# headless node mounts an empty tmpfs over it (below), like a real second
# machine, so it can reach the head only over TCP, never through its socket files.
export LLMSERVE_RUNTIME_DIR=$tmp/run
mkdir -p "$LLMSERVE_RUNTIME_DIR"
pids=()
cleanup() {
  local groups=()
  for pid in "${pids[@]}"; do groups+=(-"$pid"); done
  for group in "${groups[@]}"; do kill -TERM -- "$group" 2>/dev/null || true; done
  wait_until 5 gone "${groups[@]}" || true
  for group in "${groups[@]}"; do kill -KILL -- "$group" 2>/dev/null || true; done
  ip netns del "$head_ns" 2>/dev/null || true
  ip netns del "$node_ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log; do echo "== $f"; tail -n 30 "$f"; done
  exit 1
}

ip netns add "$head_ns"
ip netns add "$node_ns"
ip link add "vh$id" type veth peer name "vn$id"
ip link set "vh$id" netns "$head_ns"
ip link set "vn$id" netns "$node_ns"
ip -n "$head_ns" addr add "$head_ip/24" dev "vh$id"
ip -n "$node_ns" addr add "$node_ip/24" dev "vn$id"
for ns in "$head_ns" "$node_ns"; do ip -n "$ns" link set lo up; done
ip -n "$head_ns" link set "vh$id" up
ip -n "$node_ns" link set "vn$id" up

"$bin/llmserve" make-model --preset tiny --arch qwen3 --out "$tmp/model" --seed 11 >/dev/null
# In its own process group (setsid) so cleanup reaches every process it starts.
start_in() {
  local ns=$1 log=$2
  shift 2
  ip netns exec "$ns" setsid "$@" >"$tmp/$log" 2>&1 &
  pids+=($!)
}
dp=(--data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-address "$head_ip" --data-parallel-rpc-port 29550)
engine=(--served-model-name tiny --max-model-len 512 --kv-cache-memory 32M --max-num-seqs 32 --dtype float32)
# Every TCP socket between the nodes uses CURVE with the cluster key.
"$bin/llmserve" keygen --out "$tmp/key" >/dev/null
"$bin/llmserve" keygen --out "$tmp/stranger-key" >/dev/null
start_in "$head_ns" head.log "$bin/llmserve" serve "$tmp/model" "${dp[@]}" "${engine[@]}" \
  --api-server-count 2 --host "$head_ip" --port 8000 --engine-ready-timeout 120 --cluster-key-dir "$tmp/key"
start_node() {  # start_node LOG KEY_DIR
  start_in "$node_ns" "$1" unshare --mount --propagation private \
    sh -c 'mount -t tmpfs tmpfs "$LLMSERVE_RUNTIME_DIR" && exec "$@"' node "$bin/llmserve" serve "$tmp/model" "${dp[@]}" "${engine[@]}" \
    --headless --data-parallel-start-rank 2 --cluster-key-dir "$2"
}

# A headless node with another deployment's key is refused, and the head says so.
start_node stranger.log "$tmp/stranger-key"
stranger=${pids[-1]}
wait_until 60 grep -q "refused a connection on the handshake socket" "$tmp/head.log" ||
  fail "the head did not log refusing the node with the wrong key"
grep -m1 "refused a connection" "$tmp/head.log" | sed "s/^[^]]*] //"
if ip netns exec "$head_ns" curl -sf "http://$head_ip:8000/health" >/dev/null 2>&1; then
  fail "the head reports healthy although ranks 2-3 never joined"
fi
kill -KILL -- -"$stranger"
echo "node with the wrong cluster key: refused and logged"

start_node node.log "$tmp/key"
cat >"$tmp/haproxy.cfg" <<CFG
global
  maxconn 512
defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
frontend api
  bind $head_ip:8080
  default_backend llmserve
backend llmserve
  balance roundrobin
  option httpchk GET /health
  server head $head_ip:8000 check inter 500ms
CFG
start_in "$head_ns" haproxy.log haproxy -db -f "$tmp/haproxy.cfg"

wait_until 150 ip netns exec "$head_ns" curl -sf -o /dev/null --max-time 1 "http://$head_ip:8080/health" ||
  fail "the deployment did not become healthy through haproxy"
echo "deployment healthy: 4 ranks over two namespaces, haproxy on $head_ip:8080"

ip netns exec "$head_ns" env NODE_PATH="$root/node_modules" \
  node "$root/tests/e2e/multinode_load.mjs" "http://$head_ip:8080/v1" 240 4 240 >"$tmp/load.log" 2>&1 ||
  fail "load failed: $(tail -n 5 "$tmp/load.log")"
cat "$tmp/load.log"
