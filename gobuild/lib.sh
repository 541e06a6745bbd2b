# Sourced by build.sh inside a recipe's folder: the environment every Go build
# here shares, and helpers the recipes call.
# shellcheck shell=bash

# Modules come from the proxy only and are checked against the committed
# go.sum (sum.golang.org is not reachable from these machines); go.mod is never
# rewritten by a build; paths of this machine stay out of the binaries.
export GOSUMDB=off
export GOFLAGS="-mod=readonly -trimpath -buildvcs=false"
# Go 1.26 builds every recipe; a recipe that needs a newer Go sets GOTOOLCHAIN
# itself (the proxy serves go1.27.3) before calling go.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# go_build OUT PACKAGE [go build flags…]: one binary, static unless the recipe
# exported CGO_ENABLED=1 for it.
go_build() {
  local out=$1 pkg=$2
  shift 2
  local started
  started=$(date +%s)
  CGO_ENABLED=${CGO_ENABLED:-0} go build "$@" -o "$out" "$pkg"
  echo "gobuild:   $(basename "$out") $(($(date +%s) - started)) s" >&2
}

# The version of MODULE this recipe's go.mod requires (`go list -m`), e.g. v1.36.3.
module_version() {
  go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' "$1"
}

# The commit a module version was tagged from, as the proxy's .info records it
# (its Origin); empty when the proxy does not say (older uploads).
module_revision() {
  local mod=$1
  go mod download -json "$mod@$(module_version "$mod")" | sed -n 's/^[[:space:]]*"Hash": "\([0-9a-f]*\)",\{0,1\}$/\1/p' | head -n1
}

# The time a module version was published (the proxy's .info), RFC 3339 UTC:
# deterministic, and true, for build dates and image creation times.
module_time() {
  go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$1"
}

# dep_dir RECIPE[:TARGET,…]: builds (or finds cached) another recipe's targets and
# prints its folder. The recipe must be listed in this recipe's `deps` file, whose
# entries are part of this recipe's cache key (build.sh recipe_key).
dep_dir() {
  local spec=$1 name=${1%%:*}
  grep -qxF -- "$name" deps 2>/dev/null || {
    echo "gobuild: this recipe uses '$name' but its deps file does not list it (add it: the cache key must cover it)" >&2
    return 2
  }
  # shellcheck disable=SC2154 # $here: gobuild/, set by build.sh
  "$here/build.sh" "$spec"
}

# sha256_line FILE [NAME]: the checksum-file line "<hex>  NAME" (NAME defaults to FILE's base name).
sha256_line() {
  printf '%s  %s\n' "$(sha256sum "$1" | cut -d' ' -f1)" "${2:-$(basename "$1")}"
}

# deterministic_tgz OUT DIR ENTRY…: a gzip'd tar of ENTRY… under DIR, sorted,
# numeric owner 0:0, every mtime MTIME (RFC 3339; default the epoch), no gzip
# name or time: the same inputs give the same bytes.
deterministic_tgz() {
  local out=$1 dir=$2
  shift 2
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="${MTIME:-1970-01-01T00:00:00Z}" \
    --format=gnu -C "$dir" -cf - "$@" | gzip -n -9 > "$out"
}

# The folder of MODULE's source in the module cache (downloaded first when missing).
module_dir() {
  go mod download -json "$1@$(module_version "$1")" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}
