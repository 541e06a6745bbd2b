// The registry flags `images pull` and `images push` share: credentials (a
// password only ever from a file or the Docker config), extra CAs, plain-HTTP
// registries, the per-request deadline.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../../errors.js';
import {
  dockerConfigCredentials,
  normaliseHost,
  parseRegistryAuthFlag,
  type Credential,
} from '../../../registry/credentials.js';
import { DistributionClient } from '../../../registry/distribution.js';
import { parseInsecureRegistry } from '../../../registry/insecure.js';
import type { CliIo } from '../../io.js';
import { collect } from '../../registry-flags.js';

export interface TransferFlags {
  readonly registryAuth?: string[];
  readonly caFile?: string[];
  readonly insecureRegistry?: string[];
  readonly registryTimeout?: string;
}

export function withTransferOptions(command: Command): Command {
  return command
    .option(
      '--registry-auth <HOST=USER:FILE>',
      'registry credentials; the password is read from FILE (repeatable)',
      collect,
    )
    .option('--ca-file <FILE>', 'PEM CA certificate(s) to trust, e.g. the cluster CA (repeatable)', collect)
    .option(
      '--insecure-registry <HOST[:PORT]>',
      'reach this registry over plain HTTP, never HTTPS (repeatable)',
      collect,
    )
    .option('--registry-timeout <SECONDS>', 'deadline of one request (a blob chunk, a manifest)', '600');
}

export interface Clients {
  client(host: string): DistributionClient;
}

export function clientsFrom(flags: TransferFlags, io: CliIo, signal: AbortSignal): Clients {
  const read = (file: string): string => {
    try {
      return readFileSync(resolve(io.cwd, file), 'utf8');
    } catch (error) {
      throw new InputError('flags.file', `${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  };
  const credentials = new Map<string, Credential>(dockerConfigCredentials(io.env));
  for (const flag of flags.registryAuth ?? []) {
    const [host, credential] = parseRegistryAuthFlag(flag, read);
    credentials.set(host, credential);
  }
  const ca = (flags.caFile ?? []).map(read);
  const insecure = new Set((flags.insecureRegistry ?? []).map(parseInsecureRegistry));
  const seconds = Number(flags.registryTimeout ?? '600');
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new InputError('flags.invalid', `--registry-timeout ${flags.registryTimeout ?? ''}: expected seconds`);
  const made = new Map<string, DistributionClient>();
  return {
    client(host: string): DistributionClient {
      let c = made.get(host);
      if (c === undefined) {
        c = new DistributionClient({
          host,
          credential: credentials.get(normaliseHost(host)),
          ca,
          insecure,
          timeoutMs: seconds * 1000,
          signal,
        });
        made.set(host, c);
      }
      return c;
    },
  };
}
