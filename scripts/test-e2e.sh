#!/usr/bin/env bash
# The VM end-to-end tier (docs/e2e.md): installs its Debian packages when
# missing, npm dependencies when absent or stale, builds, runs dist/test/e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
# One VM tier at a time on the machine (the real-cluster tier takes the same lock).
exec 9>/tmp/kubemix-vm-tier.lock
if ! flock -n 9; then
  echo "test-e2e: another VM tier runs (/tmp/kubemix-vm-tier.lock); waiting for it" >&2
  flock 9
fi
# shellcheck source=scripts/prepare.sh
. scripts/prepare.sh
prepare scripts/apt-packages-e2e.txt

started=$(date +%s)
status=0
KUBEMIX_E2E=1 node --test --test-reporter=spec --test-concurrency=1 dist/test/e2e || status=$?
echo "e2e tier wall time: $(( $(date +%s) - started )) s (exit ${status})" >&2
exit "$status"
