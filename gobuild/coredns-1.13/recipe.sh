# CoreDNS, as its Makefile builds it (CGO_ENABLED=0, the commit stamped into
# coremain.GitCommit when the proxy names it), with the plugins of the release's
# own plugin.cfg (its generated zplugin.go is in the module).
# shellcheck shell=bash
MOD=github.com/coredns/coredns

targets() {
  echo coredns
}

build_target() {
  local out=$1
  mkdir -p "$out/bin"
  go_build "$out/bin/coredns" $MOD -ldflags "-s -w -X $MOD/coremain.GitCommit=$(module_revision $MOD | cut -c1-7)"
  module_version $MOD > "$out/VERSION"
}
