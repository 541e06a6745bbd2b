// The deployer's download cache, content-addressed: `<dir>/sha256/<hex>`
// holds a file only once its SHA256 matched the hash the plan says it must
// have — the spec's pin, the matrix's, or the checksum file upstream
// publishes beside it (read here, before the file is used, and remembered in
// `<dir>/published.json`). A file is fetched from its source once; an
// air-gapped site seeds the cache from a directory (--downloads DIR). The
// executor fills `{{sha256:ID}}` from here and uploads the files to the
// services node's cache (Task.serves); nodes fetch from there.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { HostError } from '../errors.js';
import { SHA256_REF, type ResolvedDownload } from '../model/downloads.js';
import { writeFileDurable } from './durable.js';
import type { DownloadAction } from './events.js';

/** Fetches a URL's body; tests pass their own. */
export type Fetcher = (url: string, signal: AbortSignal) => Promise<Buffer>;

/**
 * fetch() refuses a URL holding `user:password@` (WHATWG fetch): the
 * credentials a spec URL carries (filled in from the secret store) go in an
 * Authorization: Basic header instead (RFC 7617), and never into a message.
 */
export function withoutUserinfo(url: string): { readonly url: string; readonly headers: Record<string, string> } {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { url, headers: {} };
  const basic = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
  u.username = '';
  u.password = '';
  return { url: u.href, headers: { authorization: `Basic ${Buffer.from(basic).toString('base64')}` } };
}

export const httpFetcher: Fetcher = async (given, signal) => {
  const { url, headers } = withoutUserinfo(given);
  const r = await fetch(url, {
    headers,
    signal: AbortSignal.any([signal, AbortSignal.timeout(600_000)]),
    redirect: 'follow',
  });
  if (!r.ok) throw new Error(`HTTP ${r.status} ${r.statusText}`);
  return Buffer.from(await r.arrayBuffer());
};

export interface DownloadCacheOptions {
  readonly dir: string;
  /** --downloads DIR: files named by their SHA256, their upstream name, or their cache name. */
  readonly seed?: string | undefined;
  readonly fetcher: Fetcher;
  /** Fills a URL's `{{secret:…}}` (its credentials) just before the fetch; messages keep the reference. */
  readonly fill?: (url: string) => string;
  readonly signal: AbortSignal;
  readonly report: (id: string, action: DownloadAction, sha256: string, bytes?: number) => void;
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The hash a published checksum file gives for `file`: the line naming it, else a lone hash. */
export function publishedHash(text: string, file: string): string | undefined {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => /^[0-9a-fA-F]{64}$/.test(f[0] ?? ''));
  const named = lines.find((f) => f[1] !== undefined && basename(f[1].replace(/^\*/, '')) === file);
  const only = lines.length === 1 && lines[0]?.[1] === undefined ? lines[0] : undefined;
  return (named ?? only)?.[0]?.toLowerCase();
}

export class DownloadCache {
  private published: Record<string, string> = {};

  private constructor(private readonly o: DownloadCacheOptions) {}

  static async open(o: DownloadCacheOptions): Promise<DownloadCache> {
    await mkdir(join(o.dir, 'sha256'), { recursive: true, mode: 0o700 });
    return DownloadCache.read(o);
  }

  /**
   * The cache as it is, creating nothing: for the checks made before a run
   * (`offlineProblem`), so a refused command leaves no directory behind.
   */
  static async read(o: DownloadCacheOptions): Promise<DownloadCache> {
    const cache = new DownloadCache(o);
    try {
      cache.published = JSON.parse(await readFile(join(o.dir, 'published.json'), 'utf8')) as Record<string, string>;
    } catch {
      cache.published = {};
    }
    return cache;
  }

  private filled(url: string): string {
    return this.o.fill === undefined ? url : this.o.fill(url);
  }

  pathOf(hash: string): string {
    return join(this.o.dir, 'sha256', hash);
  }

  /** The SHA256 the file must have; reads upstream's checksum file once when nothing pins it. */
  async hashOf(d: ResolvedDownload): Promise<string> {
    if (d.sha256 !== undefined) return d.sha256;
    const from = d.checksumUrl;
    if (from === undefined)
      throw new HostError('download.no-sha256', `${d.id}: the plan gives no SHA256 and no checksum file`, {
        path: d.id,
      });
    const key = `${from} ${d.url}`;
    const known = this.published[key];
    if (known !== undefined) return known;
    let text: string;
    try {
      // An air-gapped site brings upstream's checksum file beside the release file (--downloads DIR).
      text =
        (await this.seededChecksum(from)) ?? (await this.o.fetcher(this.filled(from), this.o.signal)).toString('utf8');
    } catch (error) {
      throw new HostError(
        'download.checksum-unreachable',
        `${d.id}: cannot read the published SHA256 of ${d.name} ${d.version} from ${from}: ${(error as Error).message}`,
        {
          path: d.id,
          hint: `let this machine reach it, or pin the hash: spec.downloads.${d.id}.sha256`,
        },
      );
    }
    const hash = publishedHash(text, basename(new URL(d.url).pathname));
    if (hash === undefined)
      throw new HostError('download.checksum-unreadable', `${d.id}: ${from} names no SHA256 for ${basename(d.url)}`, {
        path: d.id,
        hint: `pin it: spec.downloads.${d.id}.sha256`,
      });
    this.published[key] = hash;
    await writeFileDurable(join(this.o.dir, 'published.json'), `${JSON.stringify(this.published, null, 2)}\n`, 0o600);
    return hash;
  }

  private async seededChecksum(url: string): Promise<string | undefined> {
    if (this.o.seed === undefined) return undefined;
    return (await readIfFile(join(this.o.seed, basename(new URL(url).pathname))))?.toString('utf8');
  }

  /**
   * Without the network: why this download could not be had, or undefined when
   * its hash is known (pinned, read before, or a checksum file in the seed
   * directory) and its file is in the cache or the seed directory.
   */
  async offlineProblem(d: ResolvedDownload): Promise<string | undefined> {
    let hash = d.sha256 ?? (d.checksumUrl === undefined ? undefined : this.published[`${d.checksumUrl} ${d.url}`]);
    if (hash === undefined && d.checksumUrl !== undefined) {
      const text = await this.seededChecksum(d.checksumUrl);
      hash = text === undefined ? undefined : publishedHash(text, basename(new URL(d.url).pathname));
      if (hash === undefined)
        return `no SHA256 known: put ${basename(new URL(d.checksumUrl).pathname)} (upstream's checksum file) in --downloads DIR, or pin spec.downloads.${d.id}.sha256`;
    }
    if (hash === undefined) return 'no SHA256 known';
    if ((await readIfFile(this.pathOf(hash))) !== undefined) return undefined;
    if (this.o.seed !== undefined)
      for (const name of [hash, basename(new URL(d.url).pathname), d.name])
        if ((await readIfFile(join(this.o.seed, name))) !== undefined) return undefined;
    return `not in the download cache: put ${basename(new URL(d.url).pathname)} (sha256 ${hash}) in --downloads DIR`;
  }

  /** The verified file's content: from the cache, the seed directory, or its source — in that order. */
  async content(d: ResolvedDownload): Promise<{ hash: string; content: Buffer }> {
    const hash = await this.hashOf(d);
    const held = await readIfFile(this.pathOf(hash));
    if (held !== undefined && sha256(held) === hash) {
      this.o.report(d.id, 'cached', hash, held.length);
      return { hash, content: held };
    }
    const seeded = await this.fromSeed(d, hash);
    const content = seeded ?? (await this.fromSource(d, hash));
    const tmp = `${this.pathOf(hash)}.partial`;
    await writeFile(tmp, content, { mode: 0o644 });
    await rename(tmp, this.pathOf(hash));
    this.o.report(d.id, seeded === undefined ? 'fetched' : 'seeded', hash, content.length);
    return { hash, content };
  }

  private async fromSeed(d: ResolvedDownload, hash: string): Promise<Buffer | undefined> {
    if (this.o.seed === undefined) return undefined;
    for (const name of [hash, basename(new URL(d.url).pathname), d.name]) {
      const path = join(this.o.seed, name);
      const body = await readIfFile(path);
      if (body === undefined) continue;
      const got = sha256(body);
      if (got !== hash) throw mismatch(d, path, got, hash);
      return body;
    }
    return undefined;
  }

  private async fromSource(d: ResolvedDownload, hash: string): Promise<Buffer> {
    let body: Buffer;
    try {
      body = await this.o.fetcher(this.filled(d.url), this.o.signal);
    } catch (error) {
      throw new HostError(
        'download.unreachable',
        `${d.id}: cannot fetch ${d.name} ${d.version} from ${d.url}: ${(error as Error).message}`,
        {
          path: d.id,
          hint: `put the file (sha256 ${hash}) in a directory and pass --downloads DIR, or point spec.downloads.${d.id}.url at a mirror`,
        },
      );
    }
    const got = sha256(body);
    if (got !== hash) throw mismatch(d, d.url, got, hash);
    return body;
  }
}

function mismatch(d: ResolvedDownload, from: string, got: string, want: string): HostError {
  return new HostError(
    'download.sha256-mismatch',
    `${d.id}: ${from} has sha256 ${got}, but ${d.name} ${d.version} must have ${want} (${d.hashFrom === 'published' ? 'published upstream' : `pinned in the ${d.hashFrom}`}); not used`,
    { path: d.id },
  );
}

async function readIfFile(path: string): Promise<Buffer | undefined> {
  try {
    return (await stat(path)).isFile() ? await readFile(path) : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces every `{{sha256:ID}}` with the verified hash; an id the run did not resolve is an error, never left in. */
export function fillDownloads(text: string, hashes: ReadonlyMap<string, string>, where: string): string {
  return text.replace(SHA256_REF, (_m, id: string) => {
    const h = hashes.get(id);
    if (h === undefined)
      throw new HostError('download.unresolved', `${where}: download ${id} is not in the plan's downloads`, {
        path: where,
      });
    return h;
  });
}
