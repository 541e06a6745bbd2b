#!/usr/bin/env bash
# Builds real components (Kubernetes, etcd, containerd, …) from their Go
# modules, one recipe at a time, into a cache shared by every clone on this
# machine; prints each recipe's output directory, one per line, in the order
# asked. A recipe is a folder here holding a wrapper module (go.mod + go.sum)
# and recipe.sh; its cache key hashes those files, this script and the Go
# version, so changing any of them builds anew and a stale build is never used.
#
#   gobuild/build.sh kubernetes-1.36:kubeadm,kube-apiserver etcd
#     → /var/cache/kubemix-go/kubernetes-1.36-<key>
#       /var/cache/kubemix-go/etcd-<key>
#
#   gobuild/build.sh --dir images-1.36
#     → the folder it would build into, without building anything
#
# KUBEMIX_GO_CACHE moves the cache (default /var/cache/kubemix-go, else
# ~/.cache/kubemix-go when that is not writable). Nothing is fetched from
# anywhere but the Go module proxy; go.sum is committed, so module contents
# are checked without sum.golang.org (GOSUMDB=off).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

cache_root() {
  if [ -n "${KUBEMIX_GO_CACHE:-}" ]; then
    printf '%s\n' "$KUBEMIX_GO_CACHE"
  elif mkdir -p /var/cache/kubemix-go 2>/dev/null && [ -w /var/cache/kubemix-go ]; then
    printf '%s\n' /var/cache/kubemix-go
  else
    printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/kubemix-go"
  fi
}

# The key: every file of the recipe, the shared library and this script, the
# toolchain that compiles them (GOTOOLCHAIN included: a recipe may ask for a newer
# Go), and the keys of the recipes it builds on: a recipe whose outputs use
# another's (images-1.36 packs containerd's binaries) names it in a file `deps`,
# one recipe per line, so a change there builds it anew too.
recipe_key() {
  local recipe=$1 dep
  {
    (cd "$here" && find "$recipe" -type f ! -name '*.md' | LC_ALL=C sort | xargs sha256sum)
    (cd "$here" && sha256sum build.sh lib.sh)
    (cd "$here/$recipe" && go version)
    if [ -f "$here/$recipe/deps" ]; then
      while read -r dep; do
        [ -f "$here/$dep/recipe.sh" ] || {
          echo "gobuild: $recipe/deps names '$dep', which is no recipe here" >&2
          exit 2
        }
        printf '%s %s\n' "$dep" "$(recipe_key "$dep")"
      done < <(grep -vE '^[[:space:]]*(#|$)' "$here/$recipe/deps")
    fi
  } | sha256sum | cut -c1-16
}

# build_one RECIPE[:TARGET,TARGET…]: a recipe's targets (all it lists when none
# are named) into its cache folder; each target is built once and marked done,
# so a later call that asks for more builds only what is missing.
build_one() {
  local spec=$1 recipe root key dir t started known
  local -a targets
  recipe=${spec%%:*}
  recipe=${recipe%/}
  [ -f "$here/$recipe/recipe.sh" ] || {
    echo "gobuild: no recipe '$recipe' (folders with a recipe.sh under $here)" >&2
    return 2
  }
  root=$(cache_root)
  mkdir -p "$root"
  key=$(recipe_key "$recipe")
  dir="$root/$recipe-$key"
  (
    cd "$here/$recipe"
    # shellcheck source=gobuild/lib.sh
    . "$here/lib.sh"
    # shellcheck disable=SC1091
    . ./recipe.sh
    if [ "$spec" = "$recipe" ] || [ "$spec" = "$recipe/" ]; then
      mapfile -t targets < <(targets)
    else
      IFS=, read -r -a targets <<<"${spec#*:}"
    fi
    # One builder per recipe at a time, across clones and test processes.
    exec 9>"$root/.$recipe.lock"
    flock 9
    mkdir -p "$dir"
    # Captured once: piping targets into grep -q under pipefail fails at
    # random (grep exits on its match, targets gets SIGPIPE).
    known=$(targets)
    for t in "${targets[@]}"; do
      grep -qxF -- "$t" <<<"$known" || {
        echo "gobuild: recipe $recipe has no target '$t' (it has: $(tr '\n' ' ' <<<"$known"))" >&2
        exit 2
      }
      [ -f "$dir/.done-$t" ] && continue
      started=$(date +%s)
      echo "gobuild: building $recipe:$t (once; cached in $dir)" >&2
      build_target "$dir" "$t"
      printf '%s\n' "$(($(date +%s) - started))" > "$dir/.done-$t"
    done
  )
  printf '%s\n' "$dir"
}

if [ "${1:-}" = --dir ]; then
  shift
  for r in "$@"; do
    r=${r%%:*}
    r=${r%/}
    [ -f "$here/$r/recipe.sh" ] || { echo "gobuild: no recipe '$r'" >&2; exit 2; }
    key=$(recipe_key "$r")
    printf '%s/%s-%s\n' "$(cache_root)" "$r" "$key"
  done
  exit 0
fi
[ $# -gt 0 ] || {
  echo "usage: gobuild/build.sh RECIPE... (recipes: $(cd "$here" && ls -d */ | tr -d / | tr '\n' ' '))" >&2
  exit 2
}
for r in "$@"; do build_one "${r%/}"; done
