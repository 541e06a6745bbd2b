// Credentials in the spec's URLs (an authenticating proxy, a private artifact
// mirror, a download behind Basic auth) become secrets, as kubespray's
// `http_proxy: http://user:pass@proxy:3128` users expect to write them: the
// spec keeps `user:password@`, the model splits it off. Every URL later steps
// see is `https://{{secret:url-userinfo-…}}@host/…`, so plans, scripts,
// artifacts and journals hold the secret's name only; the executor fills the
// value in just before a script goes on stdin or a file is uploaded 0600.
//
// The value is the userinfo percent-encoded again strictly (RFC 3986
// unreserved characters stay, everything else is %XX): it then holds only
// [A-Za-z0-9._~%:-], which no shell, PowerShell, curl-config or apt-conf
// string unquotes. systemd alone reads `%` (a specifier), so files for it
// name the `.systemd` form, whose `%` are doubled (systemd.unit(5)).
import { InputError } from '../errors.js';
import type { NodeDraft } from '../spec/nodes.js';
import type { ClusterSpec } from '../spec/types.js';
import { secretRef } from './secret-names.js';

/** Prefix of every secret split off a URL (the executor asks for them by it). */
export const URL_SECRET_PREFIX = 'url-userinfo-';
const SYSTEMD_SUFFIX = '.systemd';

/** Secret name → value, as the executor stores them (source `read`). */
export type UrlSecrets = Readonly<Record<string, string>>;

/** RFC 3986 percent-encoding of everything but unreserved characters (encodeURIComponent leaves !'()* too). */
function strictEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `{{secret:NAME}}` → `{{secret:NAME.systemd}}` for every URL secret in a text bound for a systemd unit. */
export function forSystemd(text: string): string {
  return text.replace(/\{\{secret:(url-userinfo-[A-Za-z0-9_-]+)\}\}/g, (_m, name: string) =>
    secretRef(`${name}${SYSTEMD_SUFFIX}`),
  );
}

interface Split {
  readonly url: string;
  readonly secrets: Record<string, string>;
}

/** One URL without its userinfo, the userinfo as a secret named `name` (and its systemd form). */
export function splitUserinfo(url: string, name: string): Split {
  if (!URL.canParse(url)) return { url, secrets: {} };
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { url, secrets: {} };
  const user = strictEncode(decodeURIComponent(u.username));
  const password = u.password === '' ? '' : `:${strictEncode(decodeURIComponent(u.password))}`;
  const value = `${user}${password}`;
  // The rest of the URL as the user wrote it: after the last `@` of its authority.
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)?.[0] ?? `${u.protocol}//`;
  const rest = url.slice(scheme.length);
  const authorityEnd = rest.search(/[/?#]|$/);
  const afterAt = rest.slice(rest.lastIndexOf('@', authorityEnd) + 1);
  return {
    url: `${scheme}${secretRef(name)}@${afterAt}`,
    secrets: { [name]: value, [`${name}${SYSTEMD_SUFFIX}`]: value.replaceAll('%', '%%') },
  };
}

/** `linux/containerd.tar.gz` → `url-userinfo-download-linux_containerd.tar.gz` (secret names take [A-Za-z0-9_.-]). */
export function downloadSecretName(id: string): string {
  return `${URL_SECRET_PREFIX}download-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

/**
 * Windows nodes would hold the credentials where kubemix cannot keep them
 * private yet: containerd's proxy in its service's registry Environment
 * (readable by every local user) and curl.exe's command line. Refused, by path.
 */
function refuseOnWindows(spec: ClusterSpec, drafts: readonly NodeDraft[], where: ReadonlyMap<string, string>): void {
  if (!drafts.some((d) => d.os.startsWith('windows'))) return;
  const direct = !spec.services.enabled;
  const paths = [...where].filter(([n]) => n.startsWith(`${URL_SECRET_PREFIX}proxy-`) || direct).map(([, p]) => p);
  if (paths.length === 0) return;
  throw new InputError(
    'spec.url-credentials-windows',
    `${paths.join(', ')}: user:password@ would reach Windows nodes, where kubemix cannot keep it private yet (a service's registry Environment is readable by every local user, curl.exe's command line by administrators' tools)`,
    {
      path: paths[0] ?? 'spec',
      hint: 'let the Windows nodes use a proxy or mirror without credentials (allowed by source address), or enable spec.services so they fetch downloads from its cache',
    },
  );
}

/**
 * The libvirt driver fetches cloud images and install ISOs on the hypervisor
 * with the URL on curl's command line and in the image cache's `.source`
 * file: credentials for those (an `images/…` pin, or the artifact mirror
 * they go through) are refused until that fetch takes them privately.
 */
function refuseForImages(spec: ClusterSpec, where: ReadonlyMap<string, string>): void {
  const path = [...where.values()].find(
    (p) => p.startsWith('spec.downloads.images/') || (spec.driver === 'libvirt' && p === 'spec.mirrors.artifacts'),
  );
  if (path === undefined) return;
  throw new InputError(
    'spec.url-credentials-images',
    `${path}: user:password@ would reach the libvirt driver's image fetch on the hypervisor, which cannot keep it private yet`,
    {
      path,
      hint: 'serve the images (and, with the libvirt driver, the artifact mirror) without credentials to the hypervisors, or fetch them yourself and give file:/// URLs',
    },
  );
}

/** The spec with every credentialed URL rewritten to name its secret, and the secrets' values. */
export function splitUrlCredentials(
  spec: ClusterSpec,
  drafts: readonly NodeDraft[],
): { readonly spec: ClusterSpec; readonly secrets: UrlSecrets } {
  const secrets: Record<string, string> = {};
  /** Secret name → the spec path its URL came from, for the refusals' messages. */
  const where = new Map<string, string>();
  const split = (url: string, name: string, path: string): string => {
    const s = splitUserinfo(url, name);
    if (s.url !== url) where.set(name, path);
    Object.assign(secrets, s.secrets);
    return s.url;
  };
  const take = (url: string | undefined, name: string, path: string): string | undefined =>
    url === undefined ? undefined : split(url, name, path);
  const proxy =
    spec.proxy === undefined
      ? undefined
      : {
          ...spec.proxy,
          http: take(spec.proxy.http, `${URL_SECRET_PREFIX}proxy-http`, 'spec.proxy.http'),
          https: take(spec.proxy.https, `${URL_SECRET_PREFIX}proxy-https`, 'spec.proxy.https'),
        };
  const artifacts = take(spec.mirrors.artifacts, `${URL_SECRET_PREFIX}mirror-artifacts`, 'spec.mirrors.artifacts');
  const downloads = Object.fromEntries(
    Object.entries(spec.downloads).map(([id, d]) => [
      id,
      d.url === undefined ? d : { ...d, url: split(d.url, downloadSecretName(id), `spec.downloads.${id}.url`) },
    ]),
  );
  if (Object.keys(secrets).length === 0) return { spec, secrets };
  refuseOnWindows(spec, drafts, where);
  refuseForImages(spec, where);
  return {
    spec: { ...spec, ...(proxy === undefined ? {} : { proxy }), mirrors: { ...spec.mirrors, artifacts }, downloads },
    secrets,
  };
}
