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
