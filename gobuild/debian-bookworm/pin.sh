#!/usr/bin/env bash
# Pins the Debian packages of every layer in `layers`: resolves each layer's
# Depends/Pre-Depends closure against this machine's apt lists (Debian 12),
# and writes packages.lock (LAYER PACKAGE VERSION SHA256), the file the
# recipe downloads by. Run it when Debian's archive has moved on (the build
# then names the package it can no longer get), review the diff, commit.
#
#   gobuild/debian-bookworm/pin.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. /etc/os-release
[ "${VERSION_CODENAME:-}" = bookworm ] || {
  echo "pin.sh: the pins are Debian 12 (bookworm) packages; this machine's apt is ${VERSION_CODENAME:-unknown}" >&2
  exit 2
}
mapfile -t exclude < <(sed -n 's/^exclude:[[:space:]]*//p' "$here/layers" | tr ' ' '\n' | grep .)
declare -A taken=()
for x in "${exclude[@]}"; do taken[$x]=excluded; done

# deps PACKAGE: its Depends and Pre-Depends, first alternative of each, real packages only.
deps() {
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$1" |
    awk '/^ *(\|)?(Pre)?Depends:/ { if (!alt) print $2; alt = ($1 ~ /^\|/) }' | grep -v '^<' || true
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
while IFS=: read -r layer pkgs; do
  case $layer in '' | '#'* | exclude) continue ;; esac
  queue=($pkgs)
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [ -z "${taken[$p]:-}" ] || continue
    taken[$p]=$layer
    ver=$(apt-cache policy "$p" | awk '/Candidate:/ { print $2 }')
    [ -n "$ver" ] && [ "$ver" != "(none)" ] || { echo "pin.sh: no candidate for $p (apt-get update?)" >&2; exit 1; }
    sha=$(apt-cache show "$p=$ver" | awk '/^SHA256:/ { print $2; exit }')
    printf '%s %s %s %s\n' "$layer" "$p" "$ver" "$sha" >> "$out"
    mapfile -t more < <(deps "$p")
    queue+=("${more[@]}")
  done
done < <(grep -vE '^[[:space:]]*(#|$)' "$here/layers")
{
  echo "# Written by pin.sh from Debian 12 (bookworm) on $(date -u +%Y-%m-%d): LAYER PACKAGE VERSION SHA256"
  sort -k1,1 -s "$out" | awk 'BEGIN{while((getline l < "'"$here/layers"'")>0) if (l ~ /^[a-z]+:/ && l !~ /^exclude:/) {split(l,a,":"); o[a[1]]=++n}} {print o[$1], $0}' | sort -k1,1n -k3,3 | cut -d' ' -f2-
} > "$here/packages.lock"
echo "pinned $(($(wc -l < "$here/packages.lock") - 1)) packages in $here/packages.lock" >&2
