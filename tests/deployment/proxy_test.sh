#!/usr/bin/env bash
# deploy/proxy/: haproxy.cfg and nginx-llmserve.conf pass `haproxy -c` and `nginx -t`,
# then run as shipped (ports 8000 -> 8001, 8002) in a network namespace of this test's own,
# in front of two demo `llmserve serve` deployments on 127.0.0.1:8001 and :8002. Through
# each proxy: completions, streamed (SSE, every event and [DONE]) and not, and each
# backend's /metrics counts some of them, all of them together; then with one backend
# stopped every request still succeeds. nginx is skipped (and said so) when not installed.
# Skips (77) without haproxy or when no network namespace can be made.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
src=$root/deploy/proxy
. "$root/tests/common/wait_until.sh"
command -v haproxy >/dev/null || { echo "SKIP: haproxy is not installed (scripts/setup installs it)"; exit 77; }

# Run in a network namespace of our own: the configs' fixed ports are free there, and
# nothing outside can reach or be reached.
. "$root/tests/deployment/harness.sh"
enter_netns "$@" || { echo "SKIP: cannot make a network namespace"; exit 77; }

tmp=$(mktemp -d)
export LLMSERVE_RUNTIME_DIR=$tmp/run XDG_CACHE_HOME=$tmp/cache
mkdir -p "$LLMSERVE_RUNTIME_DIR"
declare -A pids=()
stop() {  # stop NAME: SIGTERM its process group, SIGKILL what is left after 10 s
  local pid=${pids[$1]:-}
  [ -n "$pid" ] || return 0
  kill -TERM -- -"$pid" 2>/dev/null || true
  wait_until 10 gone -"$pid" || kill -KILL -- -"$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "pids[$1]"
}
cleanup() {
  for name in "${!pids[@]}"; do stop "$name"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.log; do echo "== $f"; tail -n 20 "$f"; done
  exit 1
}
start() {  # start NAME COMMAND...: in its own process group, output in $tmp/NAME.log
  local name=$1
  shift
  setsid "$@" >"$tmp/$name.log" 2>&1 &
  pids[$name]=$!
}

# Configuration checks.
haproxy -c -q -f "$src/haproxy.cfg" || fail "haproxy -c rejects haproxy.cfg"
echo "haproxy -c: haproxy.cfg is valid"
have_nginx=false
if command -v nginx >/dev/null; then
  have_nginx=true
  # The shipped file is an http-context include; this main file keeps nginx's state in $tmp.
  mkdir -p "$tmp/nginx"
  cat >"$tmp/nginx.conf" <<CONF
daemon off;
user root root;
pid $tmp/nginx/nginx.pid;
error_log stderr notice;
events { worker_connections 1024; }
http {
  access_log $tmp/nginx/access.log;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  include $src/nginx-llmserve.conf;
}
CONF
  nginx -q -t -e stderr -c "$tmp/nginx.conf" || fail "nginx -t rejects nginx-llmserve.conf"
  echo "nginx -t: nginx-llmserve.conf is valid"
else
  echo "SKIP (nginx part): nginx is not installed (scripts/setup installs nginx-light)"
fi

# Two demo deployments, KV cache sized small (the host's memory is shared).
for port in 8001 8002; do
  start "llmserve$port" "$bin/llmserve" serve --host 127.0.0.1 --port "$port" \
    --kv-cache-memory 32M --max-model-len 512 --max-num-seqs 8
done
for port in 8001 8002; do
  wait_until 60 http_ok "http://127.0.0.1:$port/health" || fail "llmserve on :$port did not become healthy"
done
echo "two demo deployments healthy on 127.0.0.1:8001 and :8002"

served() {  # served PORT: completions that backend answered with 2xx so far
  curl -fsS --max-time 5 "http://127.0.0.1:$1/metrics" |
    awk '/^http_requests_total[{]handler="\/v1\/completions",method="POST",status="2xx"[}]/ {n += $2} END {print n + 0}'
}
complete() {  # complete STREAM: one completion through the proxy on :8000, checked
  local stream=$1 body=$tmp/body headers=$tmp/headers
  curl -sS --fail-with-body --max-time 30 -D "$headers" -o "$body" -H 'content-type: application/json' \
    -d "{\"model\": \"demo-qwen3-tiny\", \"prompt\": \"Behind a proxy\", \"max_tokens\": 8, \"stream\": $stream}" \
    http://127.0.0.1:8000/v1/completions || fail "completion (stream $stream) failed: $(cat "$body")"
  if [ "$stream" = true ]; then
    grep -qi '^content-type: text/event-stream' "$headers" || fail "stream without text/event-stream: $(cat "$headers")"
    [ "$(grep -c '^data: {' "$body")" -ge 2 ] || fail "stream with fewer than 2 events: $(cat "$body")"
    [ "$(tail -n 2 "$body" | head -n 1)" = "data: [DONE]" ] || fail "stream does not end with [DONE]: $(cat "$body")"
  else
    grep -q '"object":"text_completion"' "$body" || fail "not a completion: $(cat "$body")"
  fi
}
both_served() {  # both_served PROXY N: N completions through the proxy, shared by the backends
  local before1 before2 want
  before1=$(served 8001) before2=$(served 8002)
  for ((i = 0; i < $2; i++)); do complete true; complete false; done
  want=$((before1 + before2 + 2 * $2))
  wait_until 5 test_total "$want" || fail "$1: backends counted $(($(served 8001) + $(served 8002))) of $want"
  local got1=$(($(served 8001) - before1)) got2=$(($(served 8002) - before2))
  [ "$got1" -ge 1 ] && [ "$got2" -ge 1 ] || fail "$1: one backend served nothing (:8001 $got1, :8002 $got2)"
  echo "$1: $((2 * $2)) completions (half streamed): :8001 served $got1, :8002 served $got2"
}
test_total() { [ $(($(served 8001) + $(served 8002))) -eq "$1" ]; }
start_proxy() {  # start_proxy haproxy|nginx: started and answering /health on :8000
  if [ "$1" = haproxy ]; then start haproxy haproxy -db -f "$src/haproxy.cfg"
  else start nginx nginx -e stderr -c "$tmp/nginx.conf"; fi
  wait_until 20 http_ok http://127.0.0.1:8000/health || fail "$1 on :8000 does not answer /health"
}
survives() {  # survives PROXY: with :8002 stopped every request still succeeds
  for ((i = 0; i < 4; i++)); do complete true; complete false; done
  echo "$1: 8 completions with :8002 stopped, all served"
}

start_proxy haproxy
both_served haproxy 6
stop haproxy
if $have_nginx; then
  start_proxy nginx
  both_served nginx 6
fi

stop llmserve8002
if $have_nginx; then
  survives nginx
  stop nginx
fi
start_proxy haproxy
survives haproxy
stop haproxy
echo "PASS"
