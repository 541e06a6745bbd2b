# The guest clock probe (main.go beside this file), static, for bench/guest-clock.ts.
# shellcheck shell=bash

targets() {
  echo clock-probe
}

build_target() {
  local out=$1
  mkdir -p "$out/bin"
  go_build "$out/bin/clock-probe" . -ldflags "-s -w"
}
