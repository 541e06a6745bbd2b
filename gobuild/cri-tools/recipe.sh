# crictl from cri-tools, as upstream's hack/release.sh builds it (CGO_ENABLED=0,
# version stamped into pkg/version), and its release archive
# crictl-<v>-linux-amd64.tar.gz (crictl at the top) with the .sha256 file
# upstream writes beside it (the bare digest).
# shellcheck shell=bash
MOD=sigs.k8s.io/cri-tools

targets() {
  printf '%s\n' crictl release
}

build_target() {
  local out=$1 t=$2 v name
  v=$(module_version $MOD)
  if [ "$t" = release ]; then
    [ -f "$out/.done-crictl" ] || build_target "$out" crictl
    name="crictl-$v-linux-amd64.tar.gz"
    mkdir -p "$out/release"
    MTIME=$(module_time $MOD) deterministic_tgz "$out/release/$name" "$out/bin" crictl
    sha256sum "$out/release/$name" | cut -d' ' -f1 > "$out/release/$name.sha256"
    return
  fi
  mkdir -p "$out/bin"
  go_build "$out/bin/crictl" $MOD/cmd/crictl -ldflags "-s -w -X $MOD/pkg/version.Version=$v"
  printf '%s\n' "$v" > "$out/VERSION"
}
