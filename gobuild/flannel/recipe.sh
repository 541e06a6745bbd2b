# flanneld, as flannel's Makefile builds it for amd64: cgo on (the UDP backend
# needs it), linked statically, version stamped into pkg/version.
# shellcheck shell=bash
MOD=github.com/flannel-io/flannel

targets() {
  echo flanneld
}

build_target() {
  local out=$1 v
  v=$(module_version $MOD)
  mkdir -p "$out/bin"
  CGO_ENABLED=1 go_build "$out/bin/flanneld" $MOD -ldflags "-s -w -X $MOD/pkg/version.Version=$v -extldflags -static"
  printf '%s\n' "$v" > "$out/VERSION"
}
