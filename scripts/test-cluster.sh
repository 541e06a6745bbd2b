#!/usr/bin/env bash
# The real-cluster tier (docs/e2e.md, "The real-cluster tier"): kubemix deploys,
# verifies, upgrades, diagnoses and removes a real Kubernetes cluster on Debian
# 12 guests under software emulation. Installs the Debian packages the VM
# tiers need, npm dependencies when absent or stale, builds, builds (or finds
# in the machine's cache) every component from the Go module proxy
# (gobuild/), runs test/e2e/cluster.e2e.test.ts, then prints each stage's time
# and the wall time. One VM tier at a time on the machine
# (/tmp/kubemix-vm-tier.lock). KUBEMIX_CLUSTER_KEEP=1 keeps a failed run's
# guests and state for a look.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
times=()
timed() {
  local name=$1 t
  shift
  t=$(date +%s)
  "$@"
  times+=("$(printf '%-64s %6d s' "$name" $(($(date +%s) - t)))")
}

exec 9>/tmp/kubemix-vm-tier.lock
if ! flock -n 9; then
  echo "test-cluster: another VM tier runs (/tmp/kubemix-vm-tier.lock); waiting for it" >&2
  flock 9
fi

list=$(mktemp)
report=$(mktemp)
trap 'rm -f "$list" "$report"' EXIT
cat scripts/apt-packages-e2e.txt scripts/apt-packages-cluster.txt > "$list"
# shellcheck source=scripts/prepare.sh
. scripts/prepare.sh
timed "Debian packages, npm dependencies, build" prepare "$list"
# Everything the tier hands over (cached on the machine after the first build: gobuild/README.md).
timed "gobuild: Kubernetes 1.35 and 1.36 bundles, kubectl, image tools" \
  bash gobuild/build.sh images-1.35 images-1.36 kubernetes-1.36:kubectl oci-image debian-bookworm:busybox >/dev/null

status=0
t=$(date +%s)
KUBEMIX_CLUSTER=1 KUBEMIX_CLUSTER_REPORT="$report" \
  node --test --test-reporter=spec --test-concurrency=1 --test-timeout=18000000 dist/test/e2e/cluster.e2e.test.js || status=$?
times+=("$(printf '%-64s %6d s' "the tier's test file" $(($(date +%s) - t)))")

{
  echo
  [ -s "$report" ] && cat "$report"
  echo "test-cluster: stages"
  printf '  %s\n' "${times[@]}"
  echo "real-cluster tier wall time: $(($(date +%s) - started)) s (exit ${status})"
} >&2
exit "$status"
