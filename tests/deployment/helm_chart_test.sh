#!/usr/bin/env bash
# deploy/helm/llmserve: k8s_check.py checks the chart's structure (Chart.yaml, every
# .Values path the templates use is in values.yaml, blocks closed). With helm installed:
# `helm lint`; `helm template llmserve` equals `kubectl kustomize deploy/kubernetes`
# object for object, and with autoscaling.enabled=true it equals that plus
# deploy/kubernetes/autoscaling; a render with other values validates. Without helm
# (no Debian 12 package has it) it skips (77) after the structural checks, saying so.
set -euo pipefail
root=$(realpath "$(dirname "$0")/../..")
check=$root/tests/deployment/k8s_check.py
chart=$root/deploy/helm/llmserve
"$check" chart "$chart" || { echo "FAIL: the chart's structure"; exit 1; }
if ! command -v helm >/dev/null; then
  echo "SKIP: helm is not installed (not packaged in Debian 12), so the chart was not rendered;" \
    "its structure was checked"
  exit 77
fi
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed (to render deploy/kubernetes)"; exit 77; }
export KUBECONFIG=/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
helm lint "$chart" >"$tmp/lint.txt" 2>&1 || fail "helm lint: $(cat "$tmp/lint.txt")"
helm template llmserve "$chart" >"$tmp/chart.yaml" || fail "helm template"
kubectl kustomize "$root/deploy/kubernetes" >"$tmp/base.yaml"
"$check" same "$tmp/chart.yaml" "$tmp/base.yaml" || fail "the chart's defaults differ from deploy/kubernetes"
helm template llmserve "$chart" --set autoscaling.enabled=true >"$tmp/chart-autoscaling.yaml"
{ cat "$tmp/base.yaml"; echo "---"; kubectl kustomize "$root/deploy/kubernetes/autoscaling"; } >"$tmp/all.yaml"
"$check" same "$tmp/chart-autoscaling.yaml" "$tmp/all.yaml" ||
  fail "autoscaling.enabled=true differs from deploy/kubernetes + deploy/kubernetes/autoscaling"
helm template other "$chart" --set autoscaling.enabled=true,model=/models/m,frontend.apiServerCount=3 \
  >"$tmp/other.yaml"
"$check" validate "$tmp/other.yaml" || fail "a render with other values does not validate"
"$check" typed "$tmp/other.yaml" || fail "a render with other values does not decode"
echo "PASS"
