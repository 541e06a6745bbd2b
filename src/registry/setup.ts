// One place that turns settings into the resolver chain lint and the webhook
// use: registry (unless offline) → on-disk cache → name heuristics. The
// webhook also gets chains for a pod's own pull-secret credentials: a cache
// per namespace and credentials, in memory, so what one namespace's secret
// could read is never an answer for another namespace.
import { createHash } from 'node:crypto';
import { chainResolvers, imageOsResolver, type ImageOsResolver } from '../lint/image-os.js';
import { withinBudget } from './budget.js';
import { ImageCache } from './cache.js';
import type { Credential, Credentials } from './credentials.js';
import type { RegistryError } from './errors.js';
import { cacheResolver, refOf, registryResolver, type RegistryResolverOptions } from './resolver.js';

export interface RegistrySettings {
  readonly offline: boolean;
  readonly credentials: Credentials;
  /** PEM certificates trusted besides the system roots: the cluster CA, --ca-file. */
  readonly ca: readonly string[];
  /** Registries reached over plain HTTP only (--insecure-registry). */
  readonly insecure?: ReadonlySet<string>;
  readonly mirrors: Readonly<Record<string, string>>;
  readonly cacheDir: string;
  readonly ttlMs: number;
  readonly timeoutMs: number;
  readonly warn: (message: string, error: RegistryError) => void;
  readonly retryAfterMs?: number;
  /** How long one image's registry lookup may take before the cache and name heuristics decide (the webhook). */
  readonly lookupBudgetMs?: number;
  /** Aborting it ends every registry lookup still running. */
  readonly signal?: AbortSignal;
}

export interface ImageResolvers {
  /** With the operator's credentials (Docker config, --registry-auth) and the shared cache. */
  readonly base: ImageOsResolver;
  /**
   * For a pod whose pull secrets gave `credentials`: images on those hosts are
   * looked up with them, cached under `scope` (the namespace) and these
   * credentials only; other images go to `base`.
   */
  scoped(scope: string, credentials: Credentials): ImageOsResolver;
}

export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Scoped chains kept at once; the oldest goes first. Each is small (memory cache of its images). */
const MAX_SCOPES = 256;

export function buildImageResolver(s: RegistrySettings): ImageOsResolver {
  return buildImageResolvers(s).base;
}

export function buildImageResolvers(s: RegistrySettings): ImageResolvers {
  const cache = new ImageCache(s.cacheDir, s.ttlMs);
  const registryOptions = (c: ImageCache, credentials: Credentials): RegistryResolverOptions => ({
    cache: c,
    credentials,
    ca: s.ca,
    timeoutMs: s.timeoutMs,
    mirrors: s.mirrors,
    warn: s.warn,
    ...(s.insecure === undefined ? {} : { insecure: s.insecure }),
    ...(s.retryAfterMs === undefined ? {} : { retryAfterMs: s.retryAfterMs }),
    ...(s.signal === undefined ? {} : { signal: s.signal }),
  });
  const limited = (r: ImageOsResolver): ImageOsResolver =>
    s.lookupBudgetMs === undefined ? r : withinBudget(r, s.lookupBudgetMs, s.warn);
  const registry = s.offline ? undefined : limited(registryResolver(registryOptions(cache, s.credentials)));
  const base = imageOsResolver({
    offline: s.offline,
    cache: cacheResolver(cache, s.mirrors),
    ...(registry === undefined ? {} : { registry }),
  });
  const scopes = new Map<string, ImageOsResolver>();
  return {
    base,
    scoped(scope, credentials) {
      if (s.offline || credentials.size === 0) return base;
      const key = scopeKey(scope, credentials);
      const known = scopes.get(key);
      if (known !== undefined) return known;
      const own = new ImageCache(undefined, s.ttlMs);
      const merged = new Map<string, Credential>([...s.credentials, ...credentials]);
      const hosts = new Set(credentials.keys());
      const onHosts = onlyHosts(
        chainResolvers(limited(registryResolver(registryOptions(own, merged))), cacheResolver(own, s.mirrors)),
        hosts,
        s.mirrors,
      );
      const chain = chainResolvers(onHosts, base);
      if (scopes.size >= MAX_SCOPES) scopes.delete(scopes.keys().next().value as string);
      scopes.set(key, chain);
      return chain;
    },
  };
}

/** In memory only; a digest so the map holds no password. */
function scopeKey(scope: string, credentials: Credentials): string {
  const h = createHash('sha256').update(scope).update('\0');
  for (const [host, c] of [...credentials].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    h.update(`${host}\0${c.username}\0${c.password}\0`);
  return h.digest('hex');
}

/** Answers only for images whose registry (after mirrors) is one of `hosts`; undefined passes them on. */
function onlyHosts(
  resolver: ImageOsResolver,
  hosts: ReadonlySet<string>,
  mirrors: Readonly<Record<string, string>>,
): ImageOsResolver {
  return {
    resolve(image) {
      const ref = refOf(image, mirrors);
      return ref !== undefined && hosts.has(ref.host) ? resolver.resolve(image) : Promise.resolve(undefined);
    },
  };
}
