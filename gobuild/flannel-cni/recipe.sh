# The flannel CNI plugin (the `flannel` binary the kube-flannel DaemonSet copies
# to /opt/cni/bin). Its home since 2021, github.com/flannel-io/cni-plugin, is not
# served by the Go module proxy (403 on every version); its source before the
# move, plugins/meta/flannel of github.com/containernetworking/plugins v0.9.1
# (the last release carrying it), is. See gobuild/README.md for what the newer
# plugin changed and why this one still serves flannel 0.28's subnet.env.
# shellcheck shell=bash
MOD=github.com/containernetworking/plugins

targets() {
  echo flannel
}

build_target() {
  local out=$1 v
  v=$(module_version $MOD)
  mkdir -p "$out/bin"
  go_build "$out/bin/flannel" $MOD/plugins/meta/flannel -ldflags "-s -w -X $MOD/pkg/utils/buildversion.BuildVersion=$v"
  printf '%s\n' "$v" > "$out/VERSION"
}
