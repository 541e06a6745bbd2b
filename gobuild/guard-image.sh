#!/usr/bin/env bash
# kubemix's own image (what `kubemix guard install` runs) from this checkout:
# the built CLI (dist/src, dist/vendor, bin/, schema/, package.json) and its
# production dependencies (npm ci --omit=dev --ignore-scripts: pure JavaScript,
# ssh2's optional native binding left out, as it falls back to JavaScript) in
# /opt/kubemix, on Node.js (gobuild/nodejs) and Debian 12's glibc and libstdc++
# (gobuild/debian-bookworm), non-root (65532). Not a cached recipe: it packs the
# checkout as it is, so run it after `npm run build`. Writes
# OUT/images/kubemix_<version>.tar and adds its line to OUT/MANIFEST.guard.
#
#   gobuild/guard-image.sh OUT [REF]    (REF default ghcr.io/kubemix/kubemix:<package.json version>)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${1:?usage: gobuild/guard-image.sh OUT [REF]}
version=$(node -p "require('$repo/package.json').version")
ref=${2:-ghcr.io/kubemix/kubemix:$version}
[ -f "$repo/dist/src/cli/main.js" ] || {
  echo "guard-image: $repo/dist is not built; run npm run build first" >&2
  exit 2
}
mapfile -t dirs < <("$here/build.sh" nodejs debian-bookworm:base,glibc,libstdcxx oci-image)
node_dir=${dirs[0]} deb=${dirs[1]} tool=${dirs[2]}/bin/oci-image

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
app="$stage/app/opt/kubemix"
mkdir -p "$app/dist"
cp -r "$repo/bin" "$repo/schema" "$repo/package.json" "$repo/package-lock.json" "$app/"
cp -r "$repo/dist/src" "$repo/dist/vendor" "$app/dist/"
find "$app/dist" \( -name '*.test.js' -o -name '*.map' \) -delete
(cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
rm -f "$app/package-lock.json"
chmod -R a+rX,go-w "$stage/app"
# A fixed time for every file: the last commit's, so one checkout gives one image.
created=$(git -C "$repo" log -1 --format=%cI 2>/dev/null | xargs -r date -u +%Y-%m-%dT%H:%M:%SZ -d || date -u +%Y-%m-%dT%H:%M:%SZ -d @0)
mkdir -p "$out/images"
file="images/kubemix_${ref##*:}.tar"
summary=$("$tool" --out "$out/$file" --ref "$ref" --created "$created" \
  --layer "$deb/base/rootfs" --history "debian-bookworm base" \
  --layer "$deb/glibc/rootfs" --history "debian-bookworm glibc" \
  --layer "$deb/libstdcxx/rootfs" --history "debian-bookworm libstdc++" \
  --layer "$node_dir/rootfs" --history "Node.js $(cat "$node_dir/VERSION") (gobuild/nodejs)" \
  --layer "$stage/app" --history "kubemix $version: dist, production node_modules" \
  --user 65532:65532 --workdir /opt/kubemix \
  --entrypoint /usr/local/bin/node --entrypoint /opt/kubemix/bin/kubemix.js \
  --label "org.opencontainers.image.title=kubemix" --label "org.opencontainers.image.version=$version")
digest=$(printf '%s' "$summary" | sed -n 's/.*"digest":"\([^"]*\)".*/\1/p')
printf 'image %s %s %s %s\n' "$ref" "$file" "$(sha256sum "$out/$file" | cut -d' ' -f1)" "$digest" > "$out/MANIFEST.guard"
cat "$out/MANIFEST.guard"
