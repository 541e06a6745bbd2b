# Our pause (main.go beside this file): what Kubernetes' pause.c does, static.
# shellcheck shell=bash

targets() {
  echo pause
}

build_target() {
  local out=$1
  mkdir -p "$out/bin"
  go_build "$out/bin/pause" . -ldflags "-s -w -X main.version=$(cat VERSION)"
  cat VERSION > "$out/VERSION"
}
