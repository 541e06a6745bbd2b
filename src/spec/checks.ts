// The spec schema's own predicates and limits, in a module that does not load
// zod: the schema (schema.ts) refines with these functions, and the parser
// generated from it (parser.generated.ts) calls the same ones, so a valid spec
// is parsed without loading zod at all.

export const SPEC_API_VERSION = 'kubemix.dev/v1alpha1';

const UNIT_MIB: Readonly<Record<string, number>> = { Mi: 1, M: 1, Gi: 1024, G: 1024, Ti: 1024 * 1024, T: 1024 * 1024 };
/** `8Gi` → 8192. NaN for anything that is not a quantity. */
export function quantityMiB(text: string): number {
  const match = /^([1-9][0-9]{0,15})(Mi|Gi|Ti|M|G|T)$/.exec(text);
  return match === null ? Number.NaN : Number(match[1]) * (UNIT_MIB[match[2] ?? ''] ?? Number.NaN);
}

/**
 * What one machine can have: 64 TiB of RAM (the largest x86 servers sold,
 * 16-socket HPE Superdome Flex / 8-socket systems, top out at 48–64 TiB)
 * and a 1 PiB disk. Anything above is a typo, and would overflow the exact
 * integers the capacity checks compare.
 */
export const MAX_RAM_MIB = 64 * 1024 * 1024;
export const MAX_DISK_MIB = 1024 * 1024 * 1024;

export function ramWithinLimit(quantity: string): boolean {
  return quantityMiB(quantity) <= MAX_RAM_MIB;
}

export function diskWithinLimit(quantity: string): boolean {
  return quantityMiB(quantity) <= MAX_DISK_MIB;
}

/** An http(s) URL with a host, as the WHATWG URL parser reads it. */
export function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const u = new URL(text);
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
}

/** The longest URL the spec takes (browsers and proxies agree on 2 KiB; longer ones are typos or payloads). */
export const MAX_URL_LENGTH = 2048;

/**
 * A download's source as the docs promise it: an http(s):// URL with a host
 * (the pinned SHA256 a URL needs is what makes its file trusted, as for
 * spec.mirrors.artifacts), or a file: URL naming a local path (`file:///p`;
 * `file://localhost/p` is the same, RFC 8089). Other schemes (ftp:, data:,
 * javascript:, …) neither curl on a node nor the deployer would fetch as meant.
 */
export function isDownloadUrlScheme(text: string): boolean {
  return isHttpUrl(text) || (URL.canParse(text) && new URL(text).protocol === 'file:');
}

/** No `#fragment`: the fetcher drops it, so it only ever carries text the user never meant to send. */
export function hasNoFragment(text: string): boolean {
  return !text.includes('#');
}

/** The longest `user:password` a URL may carry (RFC 7617 sets none; longer ones are payloads). */
export const MAX_USERINFO_LENGTH = 512;

/**
 * A URL's `user:password@`, when it has one, is one kubemix can carry as a
 * secret (model/url-credentials.ts): a user name, both parts valid
 * percent-encoded UTF-8 without control characters once decoded, bounded.
 */
export function hasUsableUserinfo(text: string): boolean {
  if (!URL.canParse(text)) return true;
  const u = new URL(text);
  if (u.username === '' && u.password === '') return true;
  if (u.username === '' || u.username.length + u.password.length > MAX_USERINFO_LENGTH) return false;
  try {
    return [u.username, u.password].every((part) => !/[\u0000-\u001f\u007f-\u009f]/.test(decodeURIComponent(part)));
  } catch {
    return false;
  }
}

/**
 * A file: URL's path is one the file system can name once percent-decoded:
 * no encoded `/` or NUL (`%2F`, `%00`), valid UTF-8. A raw space is refused
 * earlier (write `%20`, as RFC 8089 does).
 */
export function hasDecodableFilePath(text: string): boolean {
  if (!/^file:/i.test(text) || !URL.canParse(text)) return true;
  const path = new URL(text).pathname;
  if (/%2f|%00/i.test(path)) return false;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600 };
/** `90s`, `10m`, `1h` → seconds. NaN for anything else. */
export function durationSeconds(text: string): number {
  const match = /^([1-9][0-9]{0,5})(s|m|h)$/.exec(text);
  return match === null ? Number.NaN : Number(match[1]) * (UNIT_SECONDS[match[2] ?? ''] ?? Number.NaN);
}

/** A kubeadm timeout longer than a day is a typo (kubeadm's own defaults are 1 to 5 minutes). */
export const MAX_TIMEOUT_SECONDS = 24 * 3600;

export function durationWithinLimit(text: string): boolean {
  return durationSeconds(text) <= MAX_TIMEOUT_SECONDS;
}

/** etcd refuses an election timeout above 50 s (embed.Config.Validate, maxElectionMs). */
export const ETCD_MAX_ELECTION_MS = 50_000;

/** `500ms`, `10s` → milliseconds, as etcd's flags take them. NaN for anything else. */
export function etcdMilliseconds(text: string): number {
  const match = /^([1-9][0-9]{0,4})(ms|s)$/.exec(text);
  if (match === null) return Number.NaN;
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}

export function etcdDurationWithinLimit(text: string): boolean {
  return etcdMilliseconds(text) <= ETCD_MAX_ELECTION_MS;
}

/**
 * kubeadm's `ignorePreflightErrors`: check names are case-insensitive to
 * kubeadm, and `all` (every check) must stand alone — kubeadm refuses a list
 * that names both ("don't specify individual checks if 'all' is used").
 */
export function isPreflightIgnoreList(names: readonly string[]): boolean {
  const lower = names.map((n) => n.toLowerCase());
  return new Set(lower).size === lower.length && (!lower.includes('all') || lower.length === 1);
}
