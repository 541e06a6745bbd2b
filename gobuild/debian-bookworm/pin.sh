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
exclude=" $(sed -n 's/^exclude:[[:space:]]*//p' "$here/layers") "
mapfile -t layer_lines < <(grep -vE '^[[:space:]]*(#|$)' "$here/layers" | grep -v '^exclude:')
# apt-cache is slow on a busy machine: one call for the whole dependency graph,
# one for the versions; the walk itself happens here.
mapfile -t roots < <(printf '%s\n' "${layer_lines[@]}" | cut -d: -f2 | tr ' ' '\n' | grep .)
graph=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
  --no-enhances "${roots[@]}" | awk '
    /^[^ ]/ { pkg = $1; alt = 0; next }
    /^ *(\|)?(Pre)?Depends:/ { if (!alt && $2 !~ /^</) print pkg, $2; alt = ($1 ~ /^\|/) }')

declare -A layer_of=()
order=()
for line in "${layer_lines[@]}"; do
  layer=${line%%:*}
  read -r -a queue <<<"${line#*:}"
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [ -z "${layer_of[$p]:-}" ] || continue
    case $exclude in *" $p "*) continue ;; esac
    layer_of[$p]=$layer
    order+=("$p")
    mapfile -t more < <(awk -v p="$p" '$1 == p { print $2 }' <<<"$graph")
    queue+=("${more[@]}")
  done
done

declare -A ver=() sha=()
while read -r p v s; do ver[$p]=$v sha[$p]=$s; done < <(apt-cache show --no-all-versions "${order[@]}" |
  awk '/^Package:/ { p = $2 } /^Version:/ { v = $2 } /^SHA256:/ { print p, v, $2 }')
{
  echo "# Written by pin.sh from Debian 12 (bookworm) on $(date -u +%Y-%m-%d): LAYER PACKAGE VERSION SHA256"
  for p in "${order[@]}"; do
    [ -n "${ver[$p]:-}" ] || { echo "pin.sh: apt knows no version of $p (apt-get update?)" >&2; exit 1; }
    printf '%s %s %s %s\n' "${layer_of[$p]}" "$p" "${ver[$p]}" "${sha[$p]}"
  done
} > "$here/packages.lock.new"
mv "$here/packages.lock.new" "$here/packages.lock"
echo "pinned ${#order[@]} packages in $here/packages.lock" >&2
