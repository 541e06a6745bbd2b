# Our image assembler (main.go and beside, on go-containerregistry): folders in,
# an OCI image layout archive out. Used by the images-<minor> recipes.
# shellcheck shell=bash

targets() {
  echo oci-image
}

build_target() {
  local out=$1
  mkdir -p "$out/bin"
  go_build "$out/bin/oci-image" . -ldflags "-s -w"
}
