# check-status (main.go beside this file): which statements of a task's check
# script can fail without failing the check, for test/check-status.test.ts.
# shellcheck shell=bash

targets() {
  echo check-status
}

build_target() {
  local out=$1
  mkdir -p "$out/bin"
  go_build "$out/bin/check-status" . -ldflags "-s -w"
  module_version mvdan.cc/sh/v3 > "$out/VERSION"
}
