// task-prepare-hypervisors: the base images the hypervisor's guests need,
// fetched once into its image cache and checked before they are kept: per
// Linux distribution its cloud image (against the spec's pinned SHA256, or
// the digest the vendor's checksum list gives for the file: GNU
// `digest  name` / `*name`, or BSD `SHA256 (name) = digest` lines); per
// Windows build its install ISO and the virtio-win driver ISO (against the
// spec's pinned SHA256; their vendors publish no list, so without a pin the
// file is kept as served, and the task says so). A file that does not match
// is refused and deleted, never cached. A stamp beside each file records its
// source, so a later run (or another cluster) with the same source reuses it.
// A `file:///` URL is a path on the hypervisor: missing, the task names the
// spec field that gave it.
import { VIRTIO_WIN } from '../../../matrix/index.js';
import { fileURLToPath } from 'node:url';
import { shell, type ShellText } from '../../../util/escape/index.js';
import { sh } from '../../task.js';
import type { DriverHypervisor, DriverModel, DriverTask, TaskRef } from '../../types.js';
import { guestsOf } from '../artifacts.js';
import { cloudImageSource, installIsoSource } from '../images.js';
import { baseImagePath, installIsoPath, VIRTIO_WIN_ISO } from '../layout.js';
import { script, PREPARE, ref } from './common.js';

export function imageRef(hv: string, name: string): TaskRef {
  return ref(PREPARE, hv, `image-${name}`);
}

/** The cached files a guest's domain reads: its cloud image, or its install ISO and virtio-win. */
export function imageNames(node: { readonly os: string; readonly osFamily: 'linux' | 'windows' }): string[] {
  return node.osFamily === 'linux' ? [node.os] : [node.os, VIRTIO_WIN];
}

interface Fetch {
  readonly name: string;
  readonly id: string;
  readonly path: string;
  readonly url: string;
  readonly what: string;
  /** The pinned digest, or the vendor's list, or neither (kept as served). */
  readonly sha256?: string;
  readonly list?: { readonly url: string; readonly name: string; readonly algo: 'sha256' | 'sha512' };
}

function fetchOf(model: DriverModel, name: string, windows: boolean): Fetch {
  if (!windows) {
    const src = cloudImageSource(model, name);
    return { name, path: baseImagePath(name), what: `the ${name} cloud image`, ...src };
  }
  const src = installIsoSource(model, name);
  const path = name === VIRTIO_WIN ? VIRTIO_WIN_ISO : installIsoPath(name);
  const what = name === VIRTIO_WIN ? 'the virtio-win driver ISO' : `the ${name} install ISO`;
  return { name, id: src.id, path, url: src.url, what, ...(src.sha256 === undefined ? {} : { sha256: src.sha256 }) };
}

export function imageTasks(model: DriverModel, hv: DriverHypervisor): DriverTask[] {
  const guests = guestsOf(model, hv.name);
  const names = (family: 'linux' | 'windows') => [
    ...new Set(guests.filter((n) => n.osFamily === family).flatMap((n) => imageNames(n))),
  ];
  const fetches = [
    ...names('linux').map((n) => fetchOf(model, n, false)),
    ...names('windows').map((n) => fetchOf(model, n, true)),
  ];
  return fetches.sort((a, b) => a.name.localeCompare(b.name)).map((f) => imageTask(model, hv, f));
}

function checkedAgainst(f: Fetch): string {
  if (f.sha256 !== undefined) return 'checked against the pinned SHA256';
  if (f.list !== undefined) return `checked against ${f.list.algo} from the vendor's list`;
  return `not checksummed (pin spec.downloads.${f.id}.sha256)`;
}

function imageTask(model: DriverModel, hv: DriverHypervisor, f: Fetch): DriverTask {
  const algo = f.list?.algo ?? 'sha256';
  const how =
    f.sha256 !== undefined ? `sha256 ${f.sha256}` : f.list !== undefined ? `${algo} from ${f.list.url}` : 'unchecked';
  const head = shell`base=${f.path}
source=${`${f.url} ${how}`}
`;
  // A file: URL's path as the file system names it: `%20` in the URL is a space on disk (RFC 8089).
  const local = /^file:/i.test(f.url) ? fileURLToPath(f.url) : '';
  const vars = shell`url=${f.url}
path=${local}
field=${`spec.downloads.${f.id}`}
want=${f.sha256 ?? ''}
list=${f.list?.url ?? ''}
name=${f.list?.name ?? ''}
`;
  const cached = shell`[ -f "$base" ] && [ "$(cat "$base.source" 2>/dev/null)" = "$source" ]`;
  return {
    stage: PREPARE,
    host: hv.name,
    name: `image-${f.name}`,
    description: `fetch ${f.what} once into the image cache, ${checkedAgainst(f)}`,
    after: [ref(PREPARE, hv.name, 'pool')],
    check: sh(script(model, hv, shell`${head}${cached}\n`)),
    apply: sh(
      script(model, hv, shell`${head}if ${cached}; then echo "$base is cached"; exit 0; fi\n${vars}${fetch(algo)}`),
    ),
    timeoutSeconds: 3600,
  };
}

const fetch = (
  algo: 'sha256' | 'sha512',
): ShellText => shell`command -v curl >/dev/null 2>&1 || fail "curl missing: install it on this hypervisor"
case "$url" in
  file://*) [ -f "$path" ] || fail "$field.url: no file $path on this hypervisor" ;;
esac
tmp="$base.part"
trap 'rm -f "$tmp" "$tmp.sums"' EXIT
if [ -z "$want" ] && [ -n "$list" ]; then
  curl -fsSL --retry 3 -o "$tmp.sums" "$list" || fail "cannot fetch the checksum list $list"
  want=$(awk -v n="$name" '($2 == n || $2 == "*" n) && length($1) > 60 { print $1; exit }
    $2 == "(" n ")" && $3 == "=" { print $4; exit }' "$tmp.sums")
  [ -n "$want" ] || fail "$list gives no checksum for $name"
fi
want=$(printf '%s' "$want" | tr 'A-F' 'a-f')
echo "fetching $url"
curl -fsSL --retry 3 -o "$tmp" "$url" || fail "cannot fetch $url ($field)"
if [ -n "$want" ]; then
  got=$(${algo}sum "$tmp" | awk '{ print $1 }')
  [ "$got" = "$want" ] || fail "refusing $url: its ${algo} is $got, expected $want ($field: tampered, truncated or the wrong file); nothing cached"
else
  echo "keeping $url unchecked: its vendor publishes no checksum; pin $field.sha256 to check it"
fi
chmod 0644 "$tmp" && mv -f "$tmp" "$base" || fail "cannot keep $base"
printf '%s\\n' "$source" > "$base.source" || fail "cannot write $base.source"
echo "cached $base (\${want:-unchecked})"
`;
