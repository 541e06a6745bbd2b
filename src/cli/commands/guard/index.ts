// `kubemix guard serve` (the admission webhook) and `kubemix guard install`
// (its manifests). The webhook runs until SIGTERM or Ctrl-C, then drains.
import type { Command } from 'commander';
import { InputError, type KubemixError } from '../../../errors.js';
import { PullSecretReader, pullSecretResolverFor } from '../../../guard/pull-secrets.js';
import { createGuardServer } from '../../../guard/server.js';
import type { CliIo } from '../../io.js';
import { checkKeyPair, readFlagFile } from '../../key-pair.js';
import { kubeAccessFromFlags, withPullSecretOptions } from '../../pull-secret-flags.js';
import { resolversFromFlags, withRegistryOptions } from '../../registry-flags.js';
import { lintTargetFromSpec } from '../../lint-target.js';
import { registerGuardInstall } from './install.js';

export function registerGuard(program: Command, io: CliIo): void {
  const guard = program
    .command('guard')
    .description('admission webhook that places pods by image OS and rejects what Windows cannot run');
  const serve = guard
    .command('serve')
    .description('run the admission webhook (HTTPS): /mutate, /validate, /healthz, /metrics')
    .requiredOption('--cluster <SPEC>', 'cluster spec file or Kubeinit string')
    .requiredOption('--listen <ADDR:PORT>', 'address to listen on, e.g. 0.0.0.0:8443')
    .requiredOption('--tls-cert <FILE>', 'serving certificate (PEM)')
    .requiredOption('--tls-key <FILE>', 'serving key (PEM)')
    .option('--offline', 'image OS from the cache and name heuristics only');
  withPullSecretOptions(withRegistryOptions(serve)).action(
    async (
      options: { cluster: string; listen: string; tlsCert: string; tlsKey: string; offline?: boolean },
      cmd: Command,
    ) => {
      await runServe(options, cmd.optsWithGlobals(), io);
    },
  );
  registerGuardInstall(guard, io);
}

function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  const port = Number(m?.[2]);
  if (m?.[1] === undefined || !(port >= 0 && port <= 65535))
    throw new InputError('flags.listen', `--listen ${listen}: expected ADDR:PORT`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port };
}

async function runServe(
  o: { cluster: string; listen: string; tlsCert: string; tlsKey: string; offline?: boolean },
  opts: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const { host, port } = parseListen(o.listen);
  const cert = readFlagFile(io.cwd, o.tlsCert, '--tls-cert', 'flags.unreadable');
  const key = readFlagFile(io.cwd, o.tlsKey, '--tls-key', 'flags.unreadable');
  checkKeyPair(cert, key, {
    code: 'guard.tls',
    certName: `--tls-cert ${o.tlsCert}`,
    keyName: `--tls-key ${o.tlsKey}`,
    ca: false,
  });
  const target = lintTargetFromSpec(o.cluster, io);
  const log = (line: Record<string, unknown>): void =>
    io.stderr(`${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`);
  const warn = (message: string, error: KubemixError): void => log({ level: 'warn', msg: message, code: error.code });
  // Aborted once drained: lookups still running only fill the cache and must not keep the process alive.
  const stopped = new AbortController();
  const resolvers = resolversFromFlags(opts, io, {
    signal: stopped.signal,
    offline: o.offline === true,
    mirrors: target.mirrors,
    retryAfterMs: 30_000,
    // A decision has 9 s under the default 10 s webhook (the pull-secret read may take 5): a registry that does
    // not answer in 3 s is left to the cache and the image name rather than the API server refusing the pod.
    lookupBudgetMs: 3_000,
    warn,
  });
  const access = kubeAccessFromFlags(opts, io);
  const reader =
    access === undefined ? undefined : new PullSecretReader({ access, timeoutMs: 5_000, ttlMs: 60_000, warn });
  const guard = createGuardServer({
    cert,
    key,
    resolver: resolvers.base,
    cluster: target.cluster,
    log,
    ...(reader === undefined ? {} : { resolverFor: pullSecretResolverFor(reader, resolvers) }),
  });
  let bound: number;
  try {
    bound = await guard.listen(host, port);
  } catch (error) {
    // EADDRINUSE, EADDRNOTAVAIL, EACCES: the address the user gave cannot be served on.
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const hint = 'give a free port on an address of this machine';
    throw new InputError('flags.listen', `--listen ${o.listen}: cannot listen there (${code})`, {
      path: '--listen',
      hint,
    });
  }
  log({
    level: 'info',
    msg: 'listening',
    address: host,
    port: bound,
    offline: o.offline === true,
    pullSecrets: access?.origin ?? 'not read',
  });
  await new Promise<void>((done) => {
    const stop = (): void => done();
    io.signal.addEventListener('abort', stop, { once: true });
    process.once('SIGTERM', stop);
  });
  log({ level: 'info', msg: 'shutting down: draining requests in flight' });
  await guard.close();
  stopped.abort();
  log({ level: 'info', msg: 'stopped' });
}
