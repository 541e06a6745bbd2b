#!/usr/bin/env bash
# The whole test suite in a clean Debian root, as on a fresh machine: a minbase
# debootstrap of this machine's Debian release (cached, never modified), copied
# for each run; the running node and npm copied in (node does not come from
# Debian here); a clone of the checkout's HEAD (uncommitted changes are not
# tested). Inside, scripts/prepare.sh apt-gets the packages that
# scripts/apt-packages.txt lists and runs npm ci, exactly as `npm test` does on
# a new machine; then `bash .ci/run` runs the suite in a network namespace of
# its own (loopback only), so the tests' bridges and namespaces cannot meet
# those of a suite running on the machine itself. Everything runs in a private
# mount and PID namespace: its mounts and processes end with it, and the
# script checks that no mount is left before it removes the copied root.
#
# Usage (root): scripts/test-clean-root.sh [TEST.js …]   exit status is the suite's
#   TEST.js …                 instead of the whole suite (`bash .ci/run`), only these compiled tests
#                             (e.g. dist/test/kill9.test.js), after the same apt-get, npm ci and build
#   KUBEMIX_CLEAN_ROOT_CACHE  where the base root, the runs and the downloaded .deb files live
#                             (/var/cache/kubemix-clean-root; the .debs only save downloads, the
#                             packages are installed afresh in every run)
#   KUBEMIX_DEBIAN_MIRROR     Debian mirror (http://deb.debian.org/debian)
#   KUBEMIX_KEEP_ROOT=1       keep the run's root for inspection
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${KUBEMIX_CLEAN_ROOT_CACHE:-/var/cache/kubemix-clean-root}
mirror=${KUBEMIX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# shellcheck source=/dev/null
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
say() { echo "test-clean-root: $*" >&2; }

[ "$(id -u)" -eq 0 ] || { say "run as root (debootstrap, chroot and mounts need it)"; exit 2; }
[ -n "$suite" ] || { say "/etc/os-release names no VERSION_CODENAME: not a Debian release this script knows"; exit 2; }
node=$(command -v node) || { say "node is not on PATH"; exit 2; }
node=$(readlink -f "$node")
npm_dir=$(npm root -g)/npm
[ -f "$npm_dir/bin/npm-cli.js" ] || { say "npm not found at $npm_dir"; exit 2; }
if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
fi

# The base: built once per release, renamed into place only when complete.
base=$cache/base-$suite
mkdir -p "$cache"
if [ ! -f "$base/.complete" ]; then
  say "debootstrap --variant=minbase $suite into $base (once; a few minutes)"
  rm -rf "$base.build"
  if ! debootstrap --variant=minbase "$suite" "$base.build" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    tail -n 25 "$base.build/debootstrap/debootstrap.log" "$cache/debootstrap.log" >&2 2>/dev/null || true
    rm -rf "$base.build"
    say "debootstrap failed (log above)"
    exit 1
  fi
  touch "$base.build/.complete"
  rm -rf "$base"
  mv "$base.build" "$base"
fi

for t in "$@"; do
  case $t in
    dist/*.js) ;;
    *) say "$t: name compiled tests under dist/ (e.g. dist/test/kill9.test.js)"; exit 2 ;;
  esac
done
tests='bash .ci/run'
if [ $# -gt 0 ]; then tests="node --test --test-reporter=spec $(printf '%q ' "$@")"; fi
debs=$cache/apt-archives
mkdir -p "$debs/partial"
work=$(mktemp -d "$cache/run.XXXXXX")
root=$work/root
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  # The mounts live in the private namespace below and end with it; check anyway before removing anything.
  local left
  left=$(findmnt -rn -o TARGET | grep -F "$root" || true)
  if [ -n "$left" ]; then
    say "mounts left under $root (unmounting): $left"
    umount -R -l "$root" 2>/dev/null || true
    say "root kept at $work: remove it once nothing is mounted there"
    return
  fi
  if [ "${KUBEMIX_KEEP_ROOT:-}" = 1 ]; then say "root kept at $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

say "copying the base root into $root"
cp -a "$base" "$root"
rm -f "$root/.complete"
install -D -m 0755 "$node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# Node's C headers, for native npm packages built by node-gyp (npm's nodedir), when this node has them.
headers=$(dirname "$(dirname "$node")")/include/node
if [ -d "$headers" ]; then
  mkdir -p "$root/usr/local/include"
  cp -a "$headers" "$root/usr/local/include/node"
  echo 'nodedir=/usr/local' >"$root/root/.npmrc"
fi
git clone -q --no-hardlinks "$repo" "$root/work/kubemix"
say "testing commit $(git -C "$root/work/kubemix" rev-parse --short HEAD) of $repo"
# apt-get's maintainer scripts must not start daemons (haproxy, named, libvirtd …) on the host's network.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The machine's extra TLS trust anchors for node (e.g. an egress proxy's CA), so npm reaches its registry as here.
extra_ca=
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  extra_ca=/etc/kubemix-clean-root-extra-ca.pem
  cp "$NODE_EXTRA_CA_CERTS" "$root$extra_ca"
fi

# Runs in the private mount and PID namespace: the mounts, then the two phases.
inner=$(cat <<'EOF'
set -euo pipefail
root=$1 extra_ca=$2 debs=$3 tests=$4
# The root a mount point of its own: `ip netns exec` runs `mount --make-rslave /`, which a plain directory refuses.
mount --bind "$root" "$root"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount --bind "$debs" "$root/var/cache/apt/archives"
mkdir -p "$root/run/lock"
run() { chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 ${extra_ca:+NODE_EXTRA_CA_CERTS=$extra_ca} \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c "set -euo pipefail; cd /work/kubemix && $1"; }
echo "test-clean-root: apt-get the listed packages and npm ci (scripts/prepare.sh, as npm test does)" >&2
run '. scripts/prepare.sh && prepare scripts/apt-packages.txt'
echo "test-clean-root: $tests, in a network namespace of its own" >&2
rc=0
unshare --net bash -c "$(declare -f run); root=\$1 extra_ca=\$2; run \"ip link set lo up && \$3\"" inner "$root" "$extra_ca" \
  "$tests" || rc=$?
umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null || true
exit "$rc"
EOF
)
rc=0
unshare --mount --propagation private --pid --fork --kill-child bash -c "$inner" inner "$root" "$extra_ca" "$debs" \
  "$tests" || rc=$?
say "suite exit status $rc"
exit "$rc"
