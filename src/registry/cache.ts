// The on-disk image cache. Content-addressed where content is immutable
// (manifest digest → platforms, never expires) and time-bound where it is not
// (tag → digest, trusted for `ttlMs`). A memory layer in front keeps the
// webhook's warm path off the disk. Files are written beside and renamed, so
// a reader never sees half an entry; a corrupt entry is a miss. Without a
// directory the cache is memory only: what a pod's pull secrets fetched stays
// in the process, in a cache of that namespace's own.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ImagePlatforms, Platform } from './platforms.js';

export interface TagEntry {
  readonly digest: string;
  readonly fetchedAt: number;
}

export class ImageCache {
  readonly dir: string | undefined;
  readonly ttlMs: number;
  readonly #now: () => number;
  readonly #tags = new Map<string, TagEntry>();
  readonly #digests = new Map<string, readonly Platform[]>();

  constructor(dir: string | undefined, ttlMs: number, now: () => number = Date.now) {
    this.dir = dir;
    this.ttlMs = ttlMs;
    this.#now = now;
  }

  /** The digest a reference pointed at; with `fresh`, only within the TTL. */
  tag(ref: string, fresh: boolean): TagEntry | undefined {
    const entry = this.#tags.get(ref) ?? this.#read<TagEntry>(['tags', `${keyOf(ref)}.json`]);
    if (entry === undefined || typeof entry.digest !== 'string' || typeof entry.fetchedAt !== 'number')
      return undefined;
    this.#tags.set(ref, entry);
    return !fresh || this.#now() - entry.fetchedAt < this.ttlMs ? entry : undefined;
  }

  platforms(digest: string): readonly Platform[] | undefined {
    const memo = this.#digests.get(digest);
    if (memo !== undefined) return memo;
    const hex = /^sha256:([0-9a-f]{64})$/.exec(digest)?.[1];
    if (hex === undefined) return undefined;
    const entry = this.#read<{ platforms?: Platform[] }>(['digests', 'sha256', `${hex}.json`]);
    if (!Array.isArray(entry?.platforms)) return undefined;
    this.#digests.set(digest, entry.platforms);
    return entry.platforms;
  }

  store(ref: string, image: ImagePlatforms): void {
    const tag: TagEntry = { digest: image.digest, fetchedAt: this.#now() };
    this.#tags.set(ref, tag);
    this.#digests.set(image.digest, image.platforms);
    const hex = image.digest.slice('sha256:'.length);
    this.#write(['digests', 'sha256'], `${hex}.json`, { digest: image.digest, platforms: image.platforms });
    this.#write(['tags'], `${keyOf(ref)}.json`, { ref, ...tag });
  }

  #read<T>(path: readonly string[]): T | undefined {
    if (this.dir === undefined) return undefined;
    try {
      return JSON.parse(readFileSync(join(this.dir, ...path), 'utf8')) as T;
    } catch {
      return undefined;
    }
  }

  /** Best effort: a cache that cannot be written only costs a lookup next time. */
  #write(subdir: readonly string[], name: string, value: unknown): void {
    if (this.dir === undefined) return;
    const dir = join(this.dir, ...subdir);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const tmp = join(dir, `.${name}.${process.pid}.tmp`);
      writeFileSync(tmp, `${JSON.stringify(value)}\n`, { mode: 0o600 });
      renameSync(tmp, join(dir, name));
    } catch {
      // ignored on purpose, see above
    }
  }
}

function keyOf(ref: string): string {
  return createHash('sha256').update(ref).digest('hex');
}

/** $KUBEMIX_CACHE_DIR, else $XDG_CACHE_HOME/kubemix/images, else ~/.cache/kubemix/images. */
export function defaultCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  const explicit = env['KUBEMIX_CACHE_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(env['HOME'] ?? homedir(), '.cache'), 'kubemix', 'images');
}
