# containerd 2.x: the daemon, its runc shim, ctr and containerd-stress, built as
# upstream's Makefile builds them (static: CGO_ENABLED=0, tags
# urfave_cli_no_docs; the shim also no_grpc; version, revision and package
# stamped into github.com/containerd/containerd/v2/version), and the release
# archive in upstream's layout: containerd-<v>-linux-amd64.tar.gz holding bin/…
# with its .sha256sum beside it (Makefile: release, pack_release).
# shellcheck shell=bash
MOD=github.com/containerd/containerd/v2
BINS="containerd containerd-shim-runc-v2 ctr containerd-stress"

targets() {
  # shellcheck disable=SC2086 # a list
  printf '%s\n' $BINS release
}

build_target() {
  local out=$1 t=$2 v rev ld tags="urfave_cli_no_docs osusergo netgo static_build" b name
  v=$(module_version $MOD)
  if [ "$t" = release ]; then
    for b in $BINS; do [ -f "$out/.done-$b" ] || build_target "$out" "$b"; done
    name="containerd-${v#v}-linux-amd64.tar.gz"
    mkdir -p "$out/release"
    MTIME=$(module_time $MOD) deterministic_tgz "$out/release/$name" "$out" bin
    sha256_line "$out/release/$name" > "$out/release/$name.sha256sum"
    return
  fi
  rev=$(module_revision $MOD)
  ld="-s -w -X $MOD/version.Version=$v -X $MOD/version.Revision=$rev -X $MOD/version.Package=$MOD"
  [ "$t" = containerd-shim-runc-v2 ] && tags="$tags no_grpc"
  mkdir -p "$out/bin"
  go_build "$out/bin/$t" "$MOD/cmd/$t" -tags "$tags" -ldflags "$ld"
  printf '%s\n' "$v" > "$out/VERSION"
}
