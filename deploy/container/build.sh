#!/usr/bin/env bash
# Builds the llmserve image (Containerfile) from a build's executables.
#   build.sh context BIN_DIR DIR   stage the build context in DIR: usr/local/bin/llmserve*,
#                                  usr/local/share/llmserve/demo-tokenizer, Containerfile,
#                                  runtime-packages.txt; DIR/foreign-libs.txt lists linked
#                                  libraries that no Debian package provides (CUDA's)
#   build.sh builder               print the first working builder (podman, buildah, docker),
#                                  or why none works (exit 1)
#   build.sh image BIN_DIR [TAG]   stage and build TAG (default llmserve:latest); needs a
#                                  CPU-only build (cmake -DLLMSERVE_CUDA=OFF)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
exes=(llmserve llmserve-frontend llmserve-engine llmserve-worker llmserve-coordinator)

package_of() {  # package_of PATH: the Debian package that installed PATH, with or without /usr
  local alt=/usr$1
  case $1 in /usr/*) alt=${1#/usr} ;; esac
  { dpkg-query -S "$1" || dpkg-query -S "$alt" || true; } 2>/dev/null | head -n 1 | cut -d: -f1
}

stage() {  # stage BIN_DIR DIR
  local bin=$1 dir=$2 exe lib path pkg listed
  mkdir -p "$dir/usr/local/bin" "$dir/usr/local/share/llmserve"
  for exe in "${exes[@]}"; do install -m 0755 "$bin/$exe" "$dir/usr/local/bin/"; done
  # Beside bin/ in a build tree and in an installed prefix alike.
  cp -r "$(realpath "$bin/../share/llmserve/demo-tokenizer")" "$dir/usr/local/share/llmserve/"
  cp "$here/Containerfile" "$here/runtime-packages.txt" "$dir/"
  listed=" $(sed 's/#.*//' "$here/runtime-packages.txt" | xargs) "
  : >"$dir/foreign-libs.txt"
  for exe in "${exes[@]}"; do
    for lib in $(objdump -p "$bin/$exe" | awk '$1 == "NEEDED" {print $2}'); do
      path=$(ldd "$bin/$exe" | awk -v lib="$lib" '$1 == lib && $3 ~ /^\// {print $3} $1 ~ ("/" lib "$") {print $1}')
      [ -n "$path" ] || { echo "build.sh: $exe: cannot find $lib" >&2; return 1; }
      pkg=$(package_of "$path")
      if [ -z "$pkg" ]; then
        grep -qxF "$path" "$dir/foreign-libs.txt" || echo "$path" >>"$dir/foreign-libs.txt"
      elif [[ $listed != *" $pkg "* ]]; then
        echo "build.sh: $exe links $lib from package $pkg, which runtime-packages.txt does not list" >&2
        return 1
      fi
    done
  done
}

builder() {
  local b why=()
  for b in podman buildah docker; do
    if ! command -v "$b" >/dev/null; then why+=("$b is not installed"); continue; fi
    if "$b" info >/dev/null 2>&1; then echo "$b"; return 0; fi
    why+=("$b is installed but \`$b info\` fails: $("$b" info 2>&1 | grep -v "^ *$" | tail -n 1 || true)")
  done
  echo "no container builder works here: $(printf '%s; ' "${why[@]}" | sed 's/; $//')"
  return 1
}

case ${1:-} in
  context) stage "$2" "$3" ;;
  builder) builder ;;
  image)
    b=$(builder) || { echo "build.sh: $b" >&2; exit 1; }
    ctx=$(mktemp -d)
    trap 'rm -rf "$ctx"' EXIT
    stage "$2" "$ctx"
    if [ -s "$ctx/foreign-libs.txt" ]; then
      echo "build.sh: $2 links libraries no Debian 12 package provides:" $(cat "$ctx/foreign-libs.txt") >&2
      echo "build.sh: build a CPU-only tree for the image (cmake -DLLMSERVE_CUDA=OFF)" >&2
      exit 1
    fi
    case $b in
      buildah) buildah bud -f "$ctx/Containerfile" -t "${3:-llmserve:latest}" "$ctx" ;;
      *) "$b" build -f "$ctx/Containerfile" -t "${3:-llmserve:latest}" "$ctx" ;;
    esac
    ;;
  *) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
