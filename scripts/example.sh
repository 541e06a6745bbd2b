#!/usr/bin/env bash
# README's first command: install what is needed, then plan the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] || [ ! -f dist/src/cli/main.js ]; then
  npm ci --no-audit --no-fund >&2
fi
exec node bin/kubemix.js plan examples/k8s-libvirt-1-1-1.yaml "$@"
