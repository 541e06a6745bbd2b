// task-prepare-hypervisors: the cloud image of each Linux distribution the
// hypervisor's guests run, fetched once into its image cache and checked
// before it is kept: against the spec's pinned SHA256, or the digest the
// vendor's checksum list gives for the file (GNU `digest  name` / `*name`,
// or BSD `SHA256 (name) = digest` lines). A file that does not match is
// refused and deleted, never cached. A stamp beside the image records its
// source, so a later run (or another cluster) with the same source reuses it.
import { shellQuote as q } from '../../../util/escape/index.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverTask, TaskRef } from '../../types.js';
import { guestsOf } from '../artifacts.js';
import { cloudImageSource } from '../images.js';
import { baseImagePath } from '../layout.js';
import { script, PREPARE, ref } from './common.js';

export function imageRef(hv: string, os: string): TaskRef {
  return ref(PREPARE, hv, `image-${os}`);
}

export function imageTasks(model: DriverModel, hv: DriverHypervisor): DriverTask[] {
  const distros = [
    ...new Set(
      guestsOf(model, hv.name)
        .filter((n) => n.osFamily === 'linux')
        .map((n) => n.os),
    ),
  ];
  return distros.sort().map((os) => imageTask(model, hv, os));
}

function imageTask(model: DriverModel, hv: DriverHypervisor, os: string): DriverTask {
  const src = cloudImageSource(model, os);
  const algo = src.list?.algo ?? 'sha256';
  const head = `base=${q(baseImagePath(os))}
source=${q(`${src.url} ${src.sha256 === undefined ? `${algo} from ${src.list?.url ?? ''}` : `sha256 ${src.sha256}`}`)}
`;
  const vars = `url=${q(src.url)}
want=${q(src.sha256 ?? '')}
list=${q(src.list?.url ?? '')}
name=${q(src.list?.name ?? '')}
`;
  const cached = `[ -f "$base" ] && [ "$(cat "$base.source" 2>/dev/null)" = "$source" ]`;
  return {
    stage: PREPARE,
    host: hv.name,
    name: `image-${os}`,
    description: `fetch the ${os} cloud image once into the image cache, ${src.sha256 === undefined ? `checked against ${algo} from the vendor's list` : 'checked against the pinned SHA256'}`,
    after: [ref(PREPARE, hv.name, 'pool')],
    check: sh(script(model, hv, `${head}${cached}\n`)),
    apply: sh(script(model, hv, `${head}if ${cached}; then echo "$base is cached"; exit 0; fi\n${vars}${fetch(algo)}`)),
    timeoutSeconds: 3600,
  };
}

const fetch = (
  algo: 'sha256' | 'sha512',
): string => `command -v curl >/dev/null 2>&1 || fail "curl missing: install it on this hypervisor"
tmp="$base.part"
trap 'rm -f "$tmp" "$tmp.sums"' EXIT
if [ -z "$want" ]; then
  curl -fsSL --retry 3 -o "$tmp.sums" "$list" || fail "cannot fetch the checksum list $list"
  want=$(awk -v n="$name" '($2 == n || $2 == "*" n) && length($1) > 60 { print $1; exit }
    $2 == "(" n ")" && $3 == "=" { print $4; exit }' "$tmp.sums")
  [ -n "$want" ] || fail "$list gives no checksum for $name"
fi
want=$(printf '%s' "$want" | tr 'A-F' 'a-f')
echo "fetching $url"
curl -fsSL --retry 3 -o "$tmp" "$url" || fail "cannot fetch $url"
got=$(${algo}sum "$tmp" | awk '{ print $1 }')
[ "$got" = "$want" ] || fail "refusing $url: its ${algo} is $got, expected $want (tampered or truncated); nothing cached"
chmod 0644 "$tmp" && mv -f "$tmp" "$base" || fail "cannot keep $base"
printf '%s\\n' "$source" > "$base.source" || fail "cannot write $base.source"
echo "cached $base (${algo} $want)"
`;
