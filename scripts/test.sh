#!/usr/bin/env bash
# The whole test suite: installs what it needs (Debian packages via apt-get when
# missing, npm dependencies when absent or stale), builds, runs every test, then
# the linter and the formatter check.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/prepare.sh
. scripts/prepare.sh
# Debian packages whose real tools the tests call, one per line.
prepare scripts/apt-packages.txt
# Kubernetes built here from the Go module proxy (gobuild/, cached machine-wide:
# a cold machine builds it once, ~20 min on 2 cores; gobuild/README.md), for
# the tests that hold kubemix's output against kubeadm, kube-apiserver and etcd.
bash scripts/kube-binaries.sh dist/kube-binaries.json

# node 20 runs every .js under a directory named test, so the VM tier (dist/test/e2e,
# slow, own packages: `npm run test:e2e`) is left out by listing dist/test's entries.
mapfile -t suites < <(find dist/test -mindepth 1 -maxdepth 1 ! -name e2e ! -name '*.map' | sort)
# shellcheck source=scripts/host-leftovers.sh
. scripts/host-leftovers.sh
host_before=$(host_paths_snapshot)
rc=0
node --test --test-reporter=spec --test-concurrency=2 dist/src "${suites[@]}" || rc=$?
left=$(host_paths_left "$host_before")
if [ -n "$left" ]; then
  printf 'left behind on this machine by a test (remove it; the test must clean up, test/harness/host-paths.ts):\n%s\n' \
    "$left" >&2
  rc=1
fi
# Lint (typescript-eslint, import cycles, layering) and format (prettier) after
# the tests, so one run reports all three; any of them failing fails npm test.
echo "eslint (npm run lint)" >&2
npm run --silent lint || rc=1
echo "prettier --check (npm run format to rewrite)" >&2
if ! out=$(npm run --silent format:check 2>&1); then
  printf '%s\n' "$out" | tail -n 20 >&2
  rc=1
fi
exit "$rc"
