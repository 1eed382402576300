#!/usr/bin/env bash
# deploy/container/ without a container runtime: the image's root filesystem, assembled
# offline from this Debian 12 host's installed copies of runtime-packages.txt and their
# dependencies (debian_rootfs.py; nothing is downloaded) plus the context build.sh stages
# (which checks every linked library against runtime-packages.txt), with the user,
# environment, entrypoint and command the Containerfile declares. The launcher then runs
# chrooted into it as that non-root user, in a network namespace: the demo deployment
# must become healthy and answer a completion, and stop on SIGTERM. Libraries no Debian
# package provides (a CUDA build's) are bound in from the host and named: the image
# itself needs a CPU-only build. Needs root (chroot, mounts); skips (77) otherwise.
set -euo pipefail
bin=$(realpath "$1")
root=$(realpath "$(dirname "$0")/../..")
. "$root/tests/common/wait_until.sh"
src=$root/deploy/container
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot into the root filesystem, mounts)"; exit 77; }
command -v dpkg-query >/dev/null || { echo "SKIP: not a Debian host (no dpkg-query)"; exit 77; }
if [ -z "${LLMSERVE_ROOTFS_TEST_NS:-}" ]; then
  unshare --mount --net --propagation private true 2>/dev/null ||
    { echo "SKIP: cannot make mount and network namespaces"; exit 77; }
  LLMSERVE_ROOTFS_TEST_NS=1 exec unshare --mount --net --propagation private "$0" "$@"
fi
ip link set lo up

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM -- -"$pid" 2>/dev/null || true
    wait_until 10 gone -"$pid" || kill -KILL -- -"$pid" 2>/dev/null || true
  fi
  # Everything mounted lives in this test's mount namespace; unmount anyway, and never
  # let rm descend into a mount (--one-file-system).
  findmnt -rn -o TARGET | grep "^$tmp/" | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -e "$tmp/serve.log" ] && tail -n 30 "$tmp/serve.log"; exit 1; }

# What the Containerfile declares.
containerfile=$src/Containerfile
json_of() { sed -n "s/^$1 \(\[.*\]\)$/\1/p" "$containerfile"; }
entrypoint=$(json_of ENTRYPOINT) cmd=$(json_of CMD)
user=$(sed -n 's/^USER \([0-9]*\):\([0-9]*\)$/\1:\2/p' "$containerfile")
[ -n "$entrypoint" ] && [ -n "$cmd" ] || fail "the Containerfile has no ENTRYPOINT or CMD in JSON form"
[[ $entrypoint == '["/usr/local/bin/llmserve"]' ]] || fail "the entrypoint is not the launcher: $entrypoint"
[[ $user =~ ^[1-9][0-9]*:[0-9]+$ ]] || fail "the Containerfile's USER is not a numeric non-root uid:gid"
grep -q '^FROM docker.io/library/debian:bookworm-slim$' "$containerfile" || fail "the base is not Debian 12"
mapfile -t env_pairs < <(sed -n 's/^ENV //p' "$containerfile" | tr ' ' '\n')
mapfile -t argv < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1]) + json.loads(sys.argv[2])))' \
  "$entrypoint" "$cmd")

"$src/build.sh" context "$bin" "$tmp/context" || fail "build.sh cannot stage this build"
"$root/tests/deployment/debian_rootfs.py" "$src/runtime-packages.txt" "$tmp/rootfs" || fail "debian_rootfs.py"
cp -a "$tmp/context/usr/local/." "$tmp/rootfs/usr/local/"
# What the Containerfile's groupadd/useradd and WORKDIR make.
uid=${user%:*} gid=${user#*:}
mkdir -p "$tmp/rootfs/etc" "$tmp/rootfs/home/llmserve" "$tmp/rootfs/tmp" "$tmp/rootfs/proc" "$tmp/rootfs/dev"
echo "root:x:0:0:root:/root:/bin/sh" >"$tmp/rootfs/etc/passwd"
echo "llmserve:x:$uid:$gid::/home/llmserve:/usr/sbin/nologin" >>"$tmp/rootfs/etc/passwd"
printf 'root:x:0:\nllmserve:x:%s:\n' "$gid" >"$tmp/rootfs/etc/group"
chown "$uid:$gid" "$tmp/rootfs/home/llmserve"
chmod 1777 "$tmp/rootfs/tmp"
echo "root filesystem: $(du -sh "$tmp/rootfs" | cut -f1);" \
  "runs ${argv[*]} as $user"
mount --rbind /proc "$tmp/rootfs/proc"
# A /dev of its own: the few device files a process needs, and /dev/shm for the engines' rings.
mount -t tmpfs -o mode=0755 tmpfs "$tmp/rootfs/dev"
for dev in null zero random urandom; do
  touch "$tmp/rootfs/dev/$dev"
  mount --bind "/dev/$dev" "$tmp/rootfs/dev/$dev"
done
mkdir "$tmp/rootfs/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$tmp/rootfs/dev/shm"
while read -r lib; do
  echo "note: $lib is from no Debian package (a CUDA build): bound in from the host for this run;" \
    "the image needs a CPU-only build (cmake -DLLMSERVE_CUDA=OFF)"
  mkdir -p "$(dirname "$tmp/rootfs$lib")"
  touch "$tmp/rootfs$lib"
  mount --bind "$lib" "$tmp/rootfs$lib"
done <"$tmp/context/foreign-libs.txt"

# The entrypoint and command, with the Containerfile's environment and a small KV cache.
chroot=$(command -v chroot) setsid=$(command -v setsid)
env -i "${env_pairs[@]}" PATH=/usr/local/bin:/usr/bin \
  "$setsid" "$chroot" --userspec="$user" "$tmp/rootfs" "${argv[@]}" \
  --kv-cache-memory 32M --max-model-len 512 --max-num-seqs 8 >"$tmp/serve.log" 2>&1 &
pid=$!
up_or_gone() { http_ok http://127.0.0.1:8000/health || ! kill -0 "$pid" 2>/dev/null; }
wait_until 60 up_or_gone && http_ok http://127.0.0.1:8000/health ||
  fail "the launcher in the root filesystem did not become healthy"
curl -fsS --max-time 30 -H 'content-type: application/json' -o "$tmp/completion.json" \
  -d '{"prompt": "A container", "max_tokens": 4}' http://127.0.0.1:8000/v1/completions || fail "completion failed"
grep -q '"object":"text_completion"' "$tmp/completion.json" || fail "not a completion: $(cat "$tmp/completion.json")"
[ "$(stat -c %u:%g /proc/"$pid")" = "$user" ] || fail "the launcher runs as $(stat -c %u:%g /proc/"$pid"), not $user"
[ "$(readlink /proc/"$pid"/root)" = "$tmp/rootfs" ] || fail "the launcher is not chrooted"
[ -n "$(find "$tmp/rootfs/home/llmserve" -name config.json -user "$uid")" ] ||
  fail "the demo model is not in the user's HOME"
echo "launcher in the root filesystem: healthy as $user, a completion served"
kill -TERM "$pid"
wait_until 30 gone -"$pid" || fail "the launcher did not stop on SIGTERM"
wait "$pid" || fail "the launcher exited with $? on SIGTERM"
pid=
echo "PASS"
