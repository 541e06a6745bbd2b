# shellcheck shell=bash
# Sourced by scripts/test.sh. The libvirt tests run a hypervisor's tasks on
# network-namespace test hosts that share this machine's filesystem, so those
# tasks make the driver's directories here; each test removes what it made
# (test/harness/host-paths.ts). `host_paths_snapshot` lists what exists under
# those directories before the suite; `host_paths_left` prints what exists
# after it and did not before — a test that left it behind.
# KUBEMIX_TEST_HOST_PATHS (space-separated) and KUBEMIX_TEST_HOST_REGISTRY replace the list and the
# trackers' registry, for the test of this check.
host_paths_roots() {
  # The driver's definitions (src/drivers/libvirt/layout.ts), its pools and image cache under libvirt's
  # images directory (names.ts), and the trackers' registry (test/harness/host-paths.ts).
  echo "${KUBEMIX_TEST_HOST_PATHS:-/var/lib/kubemix /var/lib/libvirt/images/kubemix /run/kubemix-test-shared-paths}"
}

host_paths_snapshot() {
  local root
  for root in $(host_paths_roots); do
    [ -e "$root" ] && find "$root" 2>/dev/null
  done | sort
  return 0
}

# $1: the snapshot taken before. Prints nothing when nothing was left behind.
host_paths_left() {
  local before=$1 registry=${KUBEMIX_TEST_HOST_REGISTRY:-/run/kubemix-test-shared-paths} marker pid
  # Another test run on this machine may still be using these directories: its trackers are registered.
  for marker in "$registry"/*; do
    [ -e "$marker" ] || continue
    pid=${marker##*/}
    pid=${pid%%-*}
    if kill -0 "$pid" 2>/dev/null; then
      echo "host-leftovers: a test process (pid $pid) still uses $registry: check skipped" >&2
      return 0
    fi
  done
  comm -13 <(printf '%s\n' "$before") <(host_paths_snapshot) | grep -v '^$' || true
}
