# runc, as upstream's `make static` builds the released runc.amd64: cgo with
# libseccomp (Debian's libseccomp-dev, linked in statically: tags seccomp netgo
# osusergo, a static PIE), and the release file runc.amd64 with runc.sha256sum.
# The version comes from the module's own VERSION file (main.go embeds it);
# gitCommit stays unset: the proxy does not say which commit v1.4.2 is.
# Needs: gcc, libc6-dev, pkg-config, libseccomp-dev (gobuild/apt-packages.txt).
# shellcheck shell=bash
MOD=github.com/opencontainers/runc

targets() {
  printf '%s\n' runc release
}

build_target() {
  local out=$1 t=$2
  if [ "$t" = release ]; then
    [ -f "$out/.done-runc" ] || build_target "$out" runc
    mkdir -p "$out/release"
    cp "$out/bin/runc" "$out/release/runc.amd64"
    sha256_line "$out/release/runc.amd64" > "$out/release/runc.sha256sum"
    return
  fi
  pkg-config --exists libseccomp || {
    echo "gobuild: runc needs libseccomp-dev and pkg-config (apt-get install libseccomp-dev pkg-config; list: gobuild/apt-packages.txt)" >&2
    return 1
  }
  mkdir -p "$out/bin"
  CGO_ENABLED=1 go_build "$out/bin/runc" $MOD -buildmode=pie -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -linkmode external -extldflags -static-pie"
  module_version $MOD > "$out/VERSION"
}
