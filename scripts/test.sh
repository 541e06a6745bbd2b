#!/usr/bin/env bash
# The whole test suite: installs what it needs (Debian packages via apt-get when
# missing, npm dependencies when absent or stale), builds, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages whose real tools the tests call, one per line in scripts/apt-packages.txt.
mapfile -t wanted < <(grep -vE '^\s*(#|$)' scripts/apt-packages.txt || true)
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

# npm dependencies: install when node_modules is missing or older than the lockfile.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >&2
fi

# A clean build, so a test deleted from the sources cannot linger in dist/.
rm -rf dist
npm run --silent build
# node 20 runs every .js under a directory named test, so the VM tier (dist/test/e2e,
# slow, own packages: `npm run test:e2e`) is left out by listing dist/test's entries.
mapfile -t suites < <(find dist/test -mindepth 1 -maxdepth 1 ! -name e2e ! -name '*.map' | sort)
exec node --test --test-reporter=spec --test-concurrency=2 dist/src "${suites[@]}"
