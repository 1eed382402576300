#!/usr/bin/env bash
# deploy/kubernetes/ without a cluster: `kubectl kustomize` renders both kustomizations;
# k8s_check.py validates them (kinds, selectors, Service ports, probes on /health,
# secrets, the HPA's target and metric, and that the frontend and engine StatefulSet
# describe one data-parallel deployment), and kubectl decodes every object into its Go
# type without losing a field. Then the manifests' own commands run on loopback in a
# network namespace: the frontend pod's, and the engine pod's as pods 0 and 1 (the start
# rank from the hostname's ordinal), each with its own runtime directory like a pod,
# the cluster key from `llmserve keygen`, and llmserve-rpc resolved to 127.0.0.1; the
# deployment must become healthy with all four ranks and serve a completion; then the
# autoscaling example's replica command must serve too.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
. "$root/tests/common/wait_until.sh"
check=$root/tests/deployment/k8s_check.py
src=$root/deploy/kubernetes

. "$root/tests/deployment/harness.sh"
enter_netns "$@" || { echo "SKIP: cannot make a network namespace"; exit 77; }
start_harness

if command -v kubectl >/dev/null; then
  # kustomize runs locally; KUBECONFIG points nowhere so nothing could reach a cluster.
  export KUBECONFIG=/dev/null
  kubectl kustomize "$src" >"$tmp/base.yaml" || fail "kubectl kustomize $src"
  kubectl kustomize "$src/autoscaling" >"$tmp/autoscaling.yaml" || fail "kubectl kustomize $src/autoscaling"
  echo "kubectl kustomize: both kustomizations render"
else
  echo "SKIP (kubectl part): kubectl is not installed; the files kustomization.yaml lists are checked as they are"
  "$check" resources "$src" >"$tmp/base.yaml"
  "$check" resources "$src/autoscaling" >"$tmp/autoscaling.yaml"
fi
"$check" validate "$tmp/base.yaml" || fail "deploy/kubernetes does not validate"
"$check" validate "$tmp/autoscaling.yaml" || fail "deploy/kubernetes/autoscaling does not validate"
if command -v kubectl >/dev/null; then
  "$check" typed "$tmp/base.yaml" "$tmp/autoscaling.yaml" || fail "kubectl does not decode every object"
fi

# The pods' commands, on loopback. Small KV caches: the host's memory is shared.
"$bin/llmserve" keygen --out "$tmp/key" >/dev/null
small=(--append "--kv-cache-memory 32M --max-model-len 512 --max-num-seqs 8")
to_here=(--replace "/etc/llmserve/key=$tmp/key" --replace "llmserve-rpc=127.0.0.1" "${small[@]}")
run_pod() {  # run_pod NAME SCRIPT: like a pod NAME (its hostname, its own runtime directory)
  mkdir -p "$tmp/$1/run"
  (cd "$tmp/$1" && HOSTNAME=$1 LLMSERVE_RUNTIME_DIR=$tmp/$1/run XDG_CACHE_HOME=$tmp/cache PATH=$bin:$PATH \
    exec setsid sh -c "$2" >"$tmp/$1.log" 2>&1) &
  pids[$1]=$!
}
run_pod llmserve-frontend-0 "$("$check" script "$tmp/base.yaml" llmserve-frontend "${to_here[@]}")"
engine=$("$check" script "$tmp/base.yaml" llmserve-engine "${to_here[@]}")
run_pod llmserve-engine-0 "$engine"
run_pod llmserve-engine-1 "$engine"
wait_until 90 http_ok http://127.0.0.1:8000/health || fail "the deployment of the manifests did not become healthy"
grep -q "engine 2: loading" "$tmp/llmserve-engine-1.log" || fail "pod llmserve-engine-1 does not run rank 2"
completes http://127.0.0.1:8000 Kubernetes || fail "completion failed"
wait_until 30 all_ranks_reported http://127.0.0.1:8000/metrics 4 || fail "not all 4 ranks are in /metrics"
echo "manifests' commands: frontend + engine pods 0 and 1 healthy with ranks 0-3, a completion served"
for name in "${!pids[@]}"; do kill -TERM -- -"${pids[$name]}"; done
for name in "${!pids[@]}"; do wait_until 30 gone -"${pids[$name]}" || fail "$name did not stop on SIGTERM"; done
pids=()

run_pod llmserve-replica-0 "$("$check" script "$tmp/autoscaling.yaml" llmserve-replica "${small[@]}")"
wait_until 60 http_ok http://127.0.0.1:8000/health || fail "the replica did not become healthy"
grep -q '^vllm:num_requests_waiting' <(curl -fsS --max-time 5 http://127.0.0.1:8000/metrics) ||
  fail "the replica's /metrics lacks vllm:num_requests_waiting, the HPA's metric"
echo "autoscaling replica's command: healthy, exports vllm:num_requests_waiting"
echo "PASS"
