#!/usr/bin/env bash
# Builds (once; gobuild/ caches them machine-wide) the Kubernetes binaries the
# fast suite runs, and writes where they are to dist/kube-binaries.json for
# the tests (test/helpers/kube-binaries.ts): kubeadm of both releases the
# examples use (1.35, 1.36), kube-apiserver and kube-controller-manager 1.36,
# etcd (server and etcdctl) at the version kubeadm 1.36 names, containerd
# (its own parser reads every rendered config.toml) and check-status (mvdan.cc/sh
# reads every check script of the plans: test/check-status.test.ts).
#
#   scripts/kube-binaries.sh [OUT.json]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist/kube-binaries.json}
# Recipe → targets, in build order (the 1.36 commands share one build cache).
# shellcheck disable=SC2054 # the commas are build.sh's target lists
specs=(
  kubernetes-1.36:kubeadm,kube-apiserver,kube-controller-manager
  kubernetes-1.35:kubeadm
  etcd:etcd,etcdctl
  containerd:containerd
  check-status:check-status
)
started=$(date +%s)
mapfile -t dirs < <(gobuild/build.sh "${specs[@]}")
[ "${#dirs[@]}" -eq "${#specs[@]}" ] || { echo "kube-binaries: gobuild printed ${#dirs[@]} folders for ${#specs[@]} recipes" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
# JSON by node (the suite's own runtime), so no path needs escaping by hand.
# shellcheck disable=SC2016 # a JavaScript program, not shell
node -e '
  const [out, ...pairs] = process.argv.slice(1);
  const fs = require("node:fs");
  const doc = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const dir = pairs[i + 1];
    doc[pairs[i]] = { version: fs.readFileSync(`${dir}/VERSION`, "utf8").trim(), bin: `${dir}/bin` };
  }
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
' "$out.tmp" kubernetes-1.36 "${dirs[0]}" kubernetes-1.35 "${dirs[1]}" etcd "${dirs[2]}" containerd "${dirs[3]}" check-status "${dirs[4]}"
mv "$out.tmp" "$out"
echo "kube-binaries: ready in $(($(date +%s) - started)) s ($out)" >&2
