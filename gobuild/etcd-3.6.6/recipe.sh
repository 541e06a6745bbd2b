# Recipe for etcd (server and etcdctl) at the version go.mod requires. Static,
# as upstream builds it (etcd scripts/build_lib.sh: CGO_ENABLED=0). The server
# is the module root of go.etcd.io/etcd/server/v3 (server/main.go); its
# version string is a constant of go.etcd.io/etcd/api/v3/version, so no
# ldflags are needed for it (the Git SHA stays "Not provided": the module zip
# does not say which commit it is).
# shellcheck shell=bash

targets() {
  printf '%s\n' etcd etcdctl
}

build_target() {
  local out=$1 cmd=$2 pkg
  case $cmd in
    etcd) pkg=go.etcd.io/etcd/server/v3 ;;
    etcdctl) pkg=go.etcd.io/etcd/etcdctl/v3 ;;
  esac
  mkdir -p "$out/bin"
  go_build "$out/bin/$cmd" "$pkg" -ldflags "-s -w"
  module_version go.etcd.io/etcd/server/v3 > "$out/VERSION"
}
