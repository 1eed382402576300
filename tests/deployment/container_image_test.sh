#!/usr/bin/env bash
# deploy/container/: the OCI image itself, built by `build.sh image` with podman, buildah or
# docker, then run: `--help` answers and the container's user is not root. Skips (77),
# saying why, where no builder works, where the base image is not already in local
# storage (tests download nothing), or where this build links libraries no Debian package
# provides (the image needs a CPU-only build). container_rootfs_test.sh checks the image's
# root filesystem without a container runtime.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
build=$root/deploy/container/build.sh
base=docker.io/library/debian:bookworm-slim
b=$("$build" builder) || { echo "SKIP: $b"; exit 77; }
case $b in
  buildah) has_base() { buildah inspect --type image "$base" >/dev/null 2>&1; } ;;
  podman) has_base() { podman image exists "$base"; } ;;
  docker) has_base() { docker image inspect "$base" >/dev/null 2>&1; } ;;
esac
has_base || { echo "SKIP: $b works, but $base is not in its local storage (tests download nothing)"; exit 77; }
tmp=$(mktemp -d)
tag=localhost/llmserve-test:$$
cleanup() {
  if [ "$b" = buildah ]; then buildah rmi "$tag" >/dev/null 2>&1 || true
  else "$b" rmi "$tag" >/dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
"$build" context "$bin" "$tmp/context"
if [ -s "$tmp/context/foreign-libs.txt" ]; then
  echo "SKIP: this build links libraries no Debian 12 package provides" \
    "($(xargs <"$tmp/context/foreign-libs.txt")); the image needs a CPU-only build (cmake -DLLMSERVE_CUDA=OFF)"
  exit 77
fi
if ! "$build" image "$bin" "$tag" >"$tmp/build.log" 2>&1; then
  tail -n 30 "$tmp/build.log"
  echo "FAIL: image build"
  exit 1
fi
run=("$b" run --rm --network none)
if [ "$b" = buildah ]; then  # buildah builds; podman runs
  command -v podman >/dev/null || { echo "SKIP: the image was built with buildah; no podman to run it"; exit 77; }
  run=(podman run --rm --network none)
fi
"${run[@]}" "$tag" --help | grep -q "usage: llmserve" || { echo "FAIL: the entrypoint is not the launcher"; exit 1; }
uid=$("${run[@]}" --entrypoint /usr/bin/id "$tag" -u)
[ "$uid" != 0 ] || { echo "FAIL: the container runs as root"; exit 1; }
echo "image $tag: built from $base, the launcher answers --help, runs as uid $uid"
echo "PASS"
