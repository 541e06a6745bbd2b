// The registry flags lint and guard share, and the resolver they build.
// Passwords only ever come from files (--registry-auth HOST=USER:FILE) or the
// Docker config; warnings about unreachable registries go to the caller.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import type { ImageOsResolver } from '../lint/image-os.js';
import { defaultCacheDir } from '../registry/cache.js';
import { dockerConfigCredentials, parseRegistryAuthFlag, type Credential } from '../registry/credentials.js';
import type { RegistryError } from '../registry/errors.js';
import { parseInsecureRegistry } from '../registry/insecure.js';
import { buildImageResolvers, DEFAULT_TIMEOUT_MS, DEFAULT_TTL_MS, type ImageResolvers } from '../registry/setup.js';
import type { CliIo } from './io.js';

export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function withRegistryOptions(command: Command): Command {
  return command
    .option(
      '--registry-auth <HOST=USER:FILE>',
      'registry credentials; the password is read from FILE (repeatable)',
      collect,
    )
    .option(
      '--insecure-registry <HOST[:PORT]>',
      'reach this registry over plain HTTP, never HTTPS (repeatable)',
      collect,
    )
    .option(
      '--ca-file <FILE>',
      'PEM CA certificate(s) to trust for registries, e.g. the cluster CA (repeatable)',
      collect,
    )
    .option('--cache-dir <DIR>', 'image OS cache (default $KUBEMIX_CACHE_DIR or ~/.cache/kubemix/images)')
    .option('--cache-ttl <SECONDS>', 'how long a tag → digest answer is trusted', String(DEFAULT_TTL_MS / 1000))
    .option('--registry-timeout <SECONDS>', 'per-request deadline for registries', String(DEFAULT_TIMEOUT_MS / 1000));
}

export interface RegistryFlagContext {
  readonly offline: boolean;
  readonly mirrors: Readonly<Record<string, string>>;
  readonly warn: (message: string, error: RegistryError) => void;
  readonly extraCa?: readonly string[];
  readonly retryAfterMs?: number;
  /** See RegistrySettings.lookupBudgetMs. */
  readonly lookupBudgetMs?: number;
  /** See RegistrySettings.signal. */
  readonly signal?: AbortSignal;
}

export function resolverFromFlags(opts: Record<string, unknown>, io: CliIo, ctx: RegistryFlagContext): ImageOsResolver {
  return resolversFromFlags(opts, io, ctx).base;
}

/** The shared chain and, for the webhook, chains scoped to a pod's pull-secret credentials. */
export function resolversFromFlags(opts: Record<string, unknown>, io: CliIo, ctx: RegistryFlagContext): ImageResolvers {
  const read = (file: string): string => readFileSync(resolve(io.cwd, file), 'utf8');
  const credentials = new Map<string, Credential>(dockerConfigCredentials(io.env));
  for (const flag of strings(opts['registryAuth'])) {
    const [host, credential] = parseRegistryAuthFlag(flag, read);
    credentials.set(host, credential);
  }
  const ca = [...(ctx.extraCa ?? [])];
  for (const file of strings(opts['caFile'])) {
    try {
      ca.push(read(file));
    } catch (error) {
      throw new InputError(
        'flags.ca-file',
        `--ca-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    }
  }
  const insecure = new Set(strings(opts['insecureRegistry']).map(parseInsecureRegistry));
  const cacheDir = typeof opts['cacheDir'] === 'string' ? resolve(io.cwd, opts['cacheDir']) : defaultCacheDir(io.env);
  return buildImageResolvers({
    offline: ctx.offline,
    credentials,
    ca,
    insecure,
    mirrors: ctx.mirrors,
    cacheDir,
    ttlMs: seconds(opts['cacheTtl'], '--cache-ttl') * 1000,
    timeoutMs: seconds(opts['registryTimeout'], '--registry-timeout') * 1000,
    warn: ctx.warn,
    ...(ctx.retryAfterMs === undefined ? {} : { retryAfterMs: ctx.retryAfterMs }),
    ...(ctx.lookupBudgetMs === undefined ? {} : { lookupBudgetMs: ctx.lookupBudgetMs }),
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  });
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

function seconds(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InputError('flags.invalid', `${flag} ${String(value)}: expected seconds`);
  return n;
}
