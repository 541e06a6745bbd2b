// Registry and cache as lint's ImageOsResolvers. The registry resolver answers
// from the cache while a tag is fresh (source `cache`), else asks the
// registry (source `registry`). A registry that cannot be reached is reported
// once through `warn` and left alone for a while: lint and the webhook carry
// on with the cache and the name heuristics.
import type { ImageOs, ImageOsResolver } from '../lint/image-os.js';
import type { ImageCache } from './cache.js';
import { RegistryClient, type ClientOptions } from './client.js';
import { RegistryError } from './errors.js';
import { fetchPlatforms, summarise, type Platform } from './platforms.js';
import { applyMirror, formatRef, isDigest, parseRegistryRef, type RegistryRef } from './reference.js';

export interface RegistryResolverOptions extends ClientOptions {
  readonly cache: ImageCache;
  readonly mirrors: Readonly<Record<string, string>>;
  readonly warn: (message: string, error: RegistryError) => void;
  /** How long a host that failed is skipped (ms); lint runs once, the webhook runs for days. */
  readonly retryAfterMs?: number;
  readonly now?: () => number;
  /**
   * Ends lookups still running (guard serve, once drained: a lookup past its budget only fills the cache, and
   * kept the process alive for up to --registry-timeout after SIGTERM).
   */
  readonly signal?: AbortSignal;
}

export function registryResolver(options: RegistryResolverOptions): ImageOsResolver {
  const client = new RegistryClient(options);
  const now = options.now ?? Date.now;
  const downUntil = new Map<string, number>();
  const inflight = new Map<string, Promise<ImageOs | null | undefined>>();
  const stopped = (): boolean => options.signal?.aborted === true;
  const lookup = async (image: string): Promise<ImageOs | null | undefined> => {
    const ref = refOf(image, options.mirrors);
    if (ref === undefined) return undefined;
    const key = formatRef(ref);
    const cached = fromCache(options.cache, key, ref, true);
    if (cached !== undefined) return toImageOs(cached, 'cache');
    if ((downUntil.get(ref.host) ?? 0) > now()) return undefined;
    if (stopped()) return undefined;
    try {
      const image = await fetchPlatforms(client, ref, options.signal);
      options.cache.store(key, image);
      return toImageOs(image.platforms, 'registry');
    } catch (error) {
      // Stopped on purpose: nothing to report, and the host is not to blame.
      if (stopped()) return undefined;
      const e =
        error instanceof RegistryError ? error : new RegistryError('registry.failed', String(error), { cause: error });
      if (e.status === undefined) downUntil.set(ref.host, now() + (options.retryAfterMs ?? 60_000));
      options.warn(`${image}: image OS not from the registry (${e.message}); using the cache and name heuristics`, e);
      return undefined;
    }
  };
  return {
    // Concurrent admission requests for one image share one lookup.
    resolve(image) {
      const pending = inflight.get(image);
      if (pending !== undefined) return pending;
      const p = lookup(image).finally(() => inflight.delete(image));
      inflight.set(image, p);
      return p;
    },
  };
}

/** The cache alone, stale entries included: better than a guess from the name. */
export function cacheResolver(cache: ImageCache, mirrors: Readonly<Record<string, string>>): ImageOsResolver {
  return {
    resolve(image) {
      const ref = refOf(image, mirrors);
      const hit = ref === undefined ? undefined : fromCache(cache, formatRef(ref), ref, false);
      return Promise.resolve(hit === undefined ? undefined : toImageOs(hit, 'cache'));
    },
  };
}

export function refOf(image: string, mirrors: Readonly<Record<string, string>>): RegistryRef | undefined {
  try {
    return applyMirror(parseRegistryRef(image), mirrors);
  } catch {
    return undefined;
  }
}

function fromCache(cache: ImageCache, key: string, ref: RegistryRef, fresh: boolean): readonly Platform[] | undefined {
  // A digest reference never changes: no tag entry, no TTL.
  const digest = isDigest(ref.reference) ? ref.reference : cache.tag(key, fresh)?.digest;
  return digest === undefined ? undefined : cache.platforms(digest);
}

function toImageOs(platforms: readonly Platform[], source: 'registry' | 'cache'): ImageOs | null {
  const s = summarise(platforms);
  if (s === null) return null;
  return s.osVersion === undefined ? { os: s.os, source } : { os: s.os, osVersion: s.osVersion, source };
}
