// One place that turns settings into the resolver chain lint and the webhook
// use: registry (unless offline) → on-disk cache → name heuristics.
import { imageOsResolver, type ImageOsResolver } from '../lint/image-os.js';
import { ImageCache } from './cache.js';
import type { Credentials } from './credentials.js';
import type { RegistryError } from './errors.js';
import { cacheResolver, registryResolver } from './resolver.js';

export interface RegistrySettings {
  readonly offline: boolean;
  readonly credentials: Credentials;
  /** PEM certificates trusted besides the system roots: the cluster CA, --ca-file. */
  readonly ca: readonly string[];
  readonly mirrors: Readonly<Record<string, string>>;
  readonly cacheDir: string;
  readonly ttlMs: number;
  readonly timeoutMs: number;
  readonly warn: (message: string, error: RegistryError) => void;
  readonly retryAfterMs?: number;
}

export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_TIMEOUT_MS = 10_000;

export function buildImageResolver(s: RegistrySettings): ImageOsResolver {
  const cache = new ImageCache(s.cacheDir, s.ttlMs);
  const registry = s.offline
    ? undefined
    : registryResolver({ cache, credentials: s.credentials, ca: s.ca, timeoutMs: s.timeoutMs, mirrors: s.mirrors, warn: s.warn, ...(s.retryAfterMs === undefined ? {} : { retryAfterMs: s.retryAfterMs }) });
  return imageOsResolver({ offline: s.offline, cache: cacheResolver(cache, s.mirrors), ...(registry === undefined ? {} : { registry }) });
}
