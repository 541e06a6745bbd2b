// Shell that downloads one release file and refuses it unless its sha256
// matches. Node binaries (nodeDownloadScript) come from the services node's
// cache by the hash the executor verified; other release files (Calico's
// manifests, downloadScript) from their origin, checked against the digest
// pinned in the matrix or the one upstream publishes beside the release.
import { RELEASE_SHA256 } from '../../matrix/index.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import { downloadCache, nodeFetchUrl, resolveDownload, sha256Ref } from '../../model/downloads.js';
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES, secretRef } from '../../model/secret-names.js';

export interface Download {
  readonly url: string;
  readonly checksumUrl: string;
  /** Shell run once "$file" holds the verified download. */
  readonly install: ShellText;
}

/** `https://github.com/x/y` → `<mirror>/github.com/x/y`. */
export function mirrored(url: string, mirror: string | undefined): string {
  return mirror === undefined ? url : `${mirror.replace(/\/+$/, '')}/${url.replace(/^https?:\/\//, '')}`;
}

/**
 * curl as every node download runs it. `--retry` alone leaves a transfer cut
 * halfway failed (it retries timeouts and HTTP 408/429/5xx only): the
 * real-cluster tier's run 12 lost kubectl that way (exit 18) from the services
 * node's cache under load. A retry writes the file anew; the SHA256 check
 * after it still decides.
 */
const CURL = shellCode('curl -fsSL --retry 5 --retry-all-errors');

/**
 * What curl fetches: the URL as its argument, or — when the URL carries
 * credentials (`{{secret:url-userinfo-…}}`) — from a curl config file in the
 * script's private "$work" (mktemp -d, 0700), written 0600 by the shell's printf
 * builtin: a command line is world-readable in /proc, a config file is not.
 * The filled value is percent-encoded (no quote or backslash to escape).
 */
function curlSource(url: string, conf: ShellText): { readonly setup: ShellText; readonly arg: ShellText } {
  if (!url.includes('{{secret:')) return { setup: shellCode(''), arg: shell`${url}` };
  return { setup: shell`(umask 077; printf 'url = "%s"\\n' ${url} > ${conf})\n`, arg: shell`-K ${conf}` };
}

const URL_CONF = shellCode('"$work/url.conf"');
const CHECKSUM_URL_CONF = shellCode('"$work/checksum-url.conf"');

export function downloadScript(d: Download, mirror: string | undefined): ShellText {
  const name = d.url.slice(d.url.lastIndexOf('/') + 1);
  const pinned = RELEASE_SHA256[d.url];
  const sum = curlSource(mirrored(d.checksumUrl, mirror), CHECKSUM_URL_CONF);
  const src = curlSource(mirrored(d.url, mirror), URL_CONF);
  const want =
    pinned === undefined
      ? shell`${sum.setup}want=$(${CURL} ${sum.arg} | awk '$2 == "${name}" || $2 == "*${name}" { print $1 }')`
      : shell`want=${pinned}`;
  return shell`set -eu
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
file="$work/${name}"
${src.setup}${CURL} -o "$file" ${src.arg}
${want}
[ -n "$want" ] || { echo "no sha256 for ${name}" >&2; exit 1; }
echo "$want  $file" | sha256sum --check --status || { echo "sha256 mismatch for ${name}" >&2; exit 1; }
${d.install}
`;
}

/**
 * Fetches a node download by the SHA256 the executor fills in (`{{sha256:ID}}`):
 * from the services node's cache over HTTPS trusting only the cluster CA
 * (no proxy), or from its source when the cluster has no services node.
 * A file whose hash differs is named and removed; nothing is installed.
 */
export function nodeDownloadScript(model: ClusterModel, id: string, install: ShellText): ShellText {
  const d = resolveDownload(model, id);
  const cached = downloadCache(model) !== undefined;
  const tls = cached
    ? shell`cat > "$work/ca.crt" <<'KUBEMIX_EOF'\n${secretRef(SECRET_NAMES.clusterCaCert)}\nKUBEMIX_EOF\n`
    : shellCode('');
  const curl = cached ? shell`${CURL} --noproxy '*' --cacert "$work/ca.crt"` : CURL;
  const what = `${d.name} ${d.version} (${id})`;
  const src = curlSource(nodeFetchUrl(model, id), URL_CONF);
  return shell`set -eu
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
${tls}file="$work/${d.name}"
want=${sha256Ref(id)}
${src.setup}${curl} -o "$file" ${src.arg}
got=$(sha256sum "$file" | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "sha256 mismatch for ${what}: got $got, want $want; nothing installed" >&2; exit 1; }
${install}
`;
}
