#!/usr/bin/env bash
# The VM end-to-end tier (docs/e2e.md): installs its Debian packages when
# missing, npm dependencies when absent or stale, builds, runs dist/test/e2e.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t wanted < <(grep -vE '^\s*(#|$)' scripts/apt-packages-e2e.txt || true)
missing=()
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}" >&2
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >&2
fi

rm -rf dist
npm run --silent build
started=$(date +%s)
status=0
KUBEMIX_E2E=1 node --test --test-reporter=spec --test-concurrency=1 dist/test/e2e || status=$?
echo "e2e tier wall time: $(( $(date +%s) - started )) s (exit ${status})" >&2
exit "$status"
