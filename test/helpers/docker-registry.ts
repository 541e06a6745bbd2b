// Debian's docker-registry on a loopback port with TLS (or, given no TLS
// files, plain HTTP as an insecure registry), in one of three auth modes: none, htpasswd (Basic) or token (Bearer, with a token server the
// test runs). Started and stopped by pid; storage can be shared so one
// open instance takes the pushes the others serve.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';

export type RegistryAuth =
  | { kind: 'none' }
  | { kind: 'htpasswd'; path: string }
  | { kind: 'token'; realm: string; service: string; issuer: string; rootCertBundle: string };

export interface RunningRegistry {
  readonly port: number;
  readonly host: string;
  stop(): Promise<void>;
}

/** A storage directory the instances share and an htpasswd file (bcrypt) with one user. */
export function registryFiles(dir: string, user: string, password: string): { storage: string; htpasswd: string } {
  const storage = join(dir, 'storage');
  mkdirSync(storage);
  const htpasswd = join(dir, 'htpasswd');
  if (spawnSync('htpasswd', ['-c', '-B', '-i', htpasswd, user], { input: password }).status !== 0)
    throw new Error('htpasswd failed');
  return { storage, htpasswd };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function authYaml(auth: RegistryAuth): string {
  if (auth.kind === 'htpasswd') return `auth:\n  htpasswd:\n    realm: kubemix-test\n    path: ${auth.path}\n`;
  if (auth.kind === 'token') {
    return `auth:\n  token:\n    realm: ${auth.realm}\n    service: ${auth.service}\n    issuer: ${auth.issuer}\n    rootcertbundle: ${auth.rootCertBundle}\n`;
  }
  return '';
}

/** `tls` undefined: plain HTTP (then `ca` is unused). */
export async function startRegistry(
  dir: string,
  name: string,
  storage: string,
  tls: { cert: string; key: string } | undefined,
  auth: RegistryAuth,
  ca: string,
): Promise<RunningRegistry> {
  const port = await freePort();
  const config = join(dir, `${name}.yml`);
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:${port}\n${tls === undefined ? '' : `  tls:\n    certificate: ${tls.cert}\n    key: ${tls.key}\n`}${authYaml(auth)}`,
  );
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    if (child.pid === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  };
  for (let i = 0; i < 100; i += 1) {
    if (await ping(port, tls === undefined ? undefined : ca)) return { port, host: `127.0.0.1:${port}`, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`docker-registry ${name} did not start on ${port}`);
}

function ping(port: number, ca: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, path: '/v2/', timeout: 2000 };
    const req = ca === undefined ? httpRequest(options, onResponse) : request({ ...options, ca }, onResponse);
    function onResponse(res: IncomingMessage): void {
      res.resume();
      resolve(true);
    }
    req.on('error', () => resolve(false));
    req.end();
  });
}
