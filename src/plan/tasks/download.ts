// Shell that downloads one release file and refuses it unless its sha256
// matches: the digest pinned in the matrix when there is one, else the one
// upstream publishes beside the release. The spec's artifact mirror, when
// set, serves both in place of their origin.
import { RELEASE_SHA256 } from '../../matrix/index.js';
import { shellQuote } from '../../util/escape/index.js';

export interface Download {
  readonly url: string;
  readonly checksumUrl: string;
  /** Shell run once "$file" holds the verified download. */
  readonly install: string;
}

/** `https://github.com/x/y` → `<mirror>/github.com/x/y`. */
export function mirrored(url: string, mirror: string | undefined): string {
  return mirror === undefined ? url : `${mirror.replace(/\/+$/, '')}/${url.replace(/^https?:\/\//, '')}`;
}

export function downloadScript(d: Download, mirror: string | undefined): string {
  const name = d.url.slice(d.url.lastIndexOf('/') + 1);
  const pinned = RELEASE_SHA256[d.url];
  const want = pinned === undefined
    ? `want=$(curl -fsSL --retry 3 ${shellQuote(mirrored(d.checksumUrl, mirror))} | awk '$2 == "${name}" || $2 == "*${name}" { print $1 }')`
    : `want=${pinned}`;
  return `set -eu
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
file="$work/${name}"
curl -fsSL --retry 3 -o "$file" ${shellQuote(mirrored(d.url, mirror))}
${want}
[ -n "$want" ] || { echo "no sha256 for ${name}" >&2; exit 1; }
echo "$want  $file" | sha256sum --check --status || { echo "sha256 mismatch for ${name}" >&2; exit 1; }
${d.install}
`;
}
