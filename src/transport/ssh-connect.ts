// Opening one verified SSH connection (optionally through a bastion). Host
// keys are checked against known_hosts on every connection: nothing here can
// turn the check off.
import { shellQuote } from '../util/escape/index.js';
import { expandHome } from './home-path.js';
import { readFile } from 'node:fs/promises';
import { Client, type ConnectConfig } from 'ssh2';
import type { Duplex } from 'node:stream';
import { HostKeyError, TransportError } from './errors.js';
import { hostKeyName, type KnownHostsFile } from './known-hosts.js';

export interface Endpoint {
  /** Name used in messages (the plan's host name, or `<host> bastion`). */
  readonly label: string;
  readonly address: string;
  readonly port: number;
  readonly user: string;
  readonly identityFile?: string | undefined;
  /** Pinned keys must already be known; never recorded on first contact. */
  readonly pinned: boolean;
}

export interface ConnectOptions {
  readonly knownHosts: KnownHostsFile;
  readonly trustNewHosts: boolean;
  readonly agent?: string | undefined;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveCountMax: number;
  readonly readyTimeoutMs: number;
  /**
   * TCP_NODELAY on the connection (default on): a framed command and its
   * replies are small writes that Nagle's algorithm would hold back until the
   * peer's (delayed) ACK of the previous one.
   */
  readonly noDelay?: boolean;
}

export async function connectEndpoint(endpoint: Endpoint, options: ConnectOptions, sock?: Duplex): Promise<Client> {
  const name = hostKeyName(endpoint.address, endpoint.port);
  const algorithms = options.knownHosts.algorithmsFor(name);
  let refusal: HostKeyError | undefined;
  const config: ConnectConfig = {
    host: endpoint.address,
    port: endpoint.port,
    username: endpoint.user,
    keepaliveInterval: options.keepaliveIntervalMs,
    keepaliveCountMax: options.keepaliveCountMax,
    readyTimeout: options.readyTimeoutMs,
    ...(sock === undefined ? {} : { sock }),
    ...(endpoint.identityFile === undefined ? {} : { privateKey: await readIdentity(endpoint) }),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    ...(algorithms.length === 0 ? {} : { algorithms: { serverHostKey: algorithms as never } }),
    hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
      judgeKey(endpoint, name, key, options).then(
        () => verify(true),
        (error: unknown) => {
          refusal = error instanceof HostKeyError ? error : new HostKeyError(endpoint.label, String(error));
          verify(false);
        },
      );
    },
  };
  const client = new Client();
  return new Promise((resolve, reject) => {
    let settled = false;
    const onError = (error: Error): void => {
      // ssh2 may report more than once (a handshake timeout, then "Connection lost before handshake" as the
      // socket closes): the first settles, the later ones are expected and must not go unheard (uncaught).
      if (settled) return;
      settled = true;
      client.end();
      reject(
        refusal ??
          new TransportError(
            endpoint.label,
            `cannot connect to ${endpoint.user}@${name}: ${error.message}`,
            !isAuthFailure(error),
            error,
          ),
      );
    };
    client.on('error', onError);
    client.once('ready', () => {
      settled = true;
      client.off('error', onError);
      client.setNoDelay(options.noDelay ?? true);
      resolve(client);
    });
    client.connect(config);
  });
}

function isAuthFailure(error: Error): boolean {
  return /authentication methods failed/i.test(error.message);
}

async function judgeKey(endpoint: Endpoint, name: string, key: Buffer, options: ConnectOptions): Promise<void> {
  const verdict = options.knownHosts.verify(name, key);
  const file = options.knownHosts.path;
  switch (verdict.status) {
    case 'ok':
      return;
    case 'revoked':
      throw new HostKeyError(
        endpoint.label,
        `${endpoint.label} (${name}) offered the revoked host key ${verdict.fingerprint} (marked @revoked in ${file})`,
      );
    case 'changed':
      throw new HostKeyError(
        endpoint.label,
        `host key of ${endpoint.label} (${name}) CHANGED: known ${verdict.known.join(', ')}, offered ${verdict.fingerprint}; refusing to connect`,
        `if the host was really reinstalled, remove its old line: ssh-keygen -R ${shellQuote(name)} -f ${shellQuote(file)}`,
      );
    case 'unknown':
      if (endpoint.pinned) {
        const missing = `${endpoint.label} (${name}) is created by kubemix but its pinned host key is missing from ${file}`;
        throw new HostKeyError(
          endpoint.label,
          `${missing} (offered ${verdict.fingerprint})`,
          'pinned keys are never learnt on first contact: restore the state directory or re-create the machine',
        );
      }
      if (!options.trustNewHosts) {
        const ca = verdict.caOnly
          ? ' (only an @cert-authority line matches; host certificates are not supported by this client, add the plain key)'
          : '';
        throw new HostKeyError(
          endpoint.label,
          `unknown host key for ${endpoint.label} (${name}): ${verdict.fingerprint}; first contact refused${ca}`,
          `check the fingerprint, then re-run with --trust-new-hosts to record it in ${file}`,
        );
      }
      await options.knownHosts.add(name, key);
  }
}

/** The private key file, or a clear, non-retried error naming it. */
async function readIdentity(endpoint: Endpoint): Promise<Buffer> {
  const path = expandHome(endpoint.identityFile ?? '');
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new TransportError(endpoint.label, `cannot read the identity file ${path} (${code})`, false, error);
  }
}
