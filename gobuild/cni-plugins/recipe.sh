# The CNI reference plugins: every plugin upstream's build_linux.sh builds
# (meta, main and ipam, not the Windows ones), static, with the version
# stamped as upstream's release workflow does (pkg/utils/buildversion), and the
# release archive cni-plugins-linux-amd64-v<v>.tgz (plugins at the top, with
# LICENSE and README.md) with its .sha256 beside it.
# shellcheck shell=bash
MOD=github.com/containernetworking/plugins

targets() {
  echo plugins
  echo release
}

build_target() {
  local out=$1 t=$2 v dir p name
  v=$(module_version $MOD)
  if [ "$t" = release ]; then
    [ -f "$out/.done-plugins" ] || build_target "$out" plugins
    name="cni-plugins-linux-amd64-$v.tgz"
    mkdir -p "$out/release"
    MTIME=$(module_time $MOD) deterministic_tgz "$out/release/$name" "$out/bin" .
    sha256_line "$out/release/$name" > "$out/release/$name.sha256"
    return
  fi
  dir=$(module_dir $MOD)
  mkdir -p "$out/bin"
  # The plugin list is the wrapper's tool list (go.mod), itself every plugins/{meta,main,ipam}/* of the release.
  for p in $(go list -f '{{.ImportPath}}' tool | grep "^$MOD/plugins/"); do
    go_build "$out/bin/${p##*/}" "$p" -ldflags "-s -w -X $MOD/pkg/utils/buildversion.BuildVersion=$v"
  done
  install -m 0644 "$dir/LICENSE" "$dir/README.md" "$out/bin/"
  printf '%s\n' "$v" > "$out/VERSION"
}
