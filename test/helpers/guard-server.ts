// guard's HTTPS server on a loopback port with a certificate from a fresh test
// CA, for a cluster with a Windows Server 2022 pool: the options that differ
// between tests (resolver, log, deadline) come in.
import { readFileSync } from 'node:fs';
import { createGuardServer, type GuardServer, type GuardServerOptions } from '../../src/guard/server.js';
import { lintClusterFor } from '../../src/lint/cluster.js';
import { makePki } from './pki.js';

export interface LoopbackGuard {
  readonly guard: GuardServer;
  readonly port: number;
  /** The CA that signed the server's certificate (for `localhost`). */
  readonly ca: string;
}

export async function loopbackGuard(
  dir: string,
  options: Pick<GuardServerOptions, 'resolver' | 'log' | 'requestTimeoutMs'>,
): Promise<LoopbackGuard> {
  const pki = makePki(dir);
  const tls = pki.server('guard');
  const guard = createGuardServer({
    cert: readFileSync(tls.cert, 'utf8'),
    key: readFileSync(tls.key, 'utf8'),
    cluster: lintClusterFor(['windows-2022']),
    ...options,
  });
  return { guard, port: await guard.listen('127.0.0.1', 0), ca: pki.caCert };
}
