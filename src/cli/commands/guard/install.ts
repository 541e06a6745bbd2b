// `kubemix guard install`: renders the webhook's manifests into a directory
// (never stdout: they hold the serving key). The serving certificate is
// signed by --ca-cert/--ca-key, else the cluster CA from the state
// directory (--state-dir, $KUBEMIX_STATE_DIR).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { InputError } from '../../../errors.js';
import { SecretStore } from '../../../exec/secrets.js';
import { chosenStateDir, statePaths } from '../../../exec/state-dir.js';
import { renderInstall, serviceDnsNames } from '../../../guard/install.js';
import { signServingCert } from '../../../guard/serving-cert.js';
import { parseInsecureRegistry } from '../../../registry/insecure.js';
import { SECRET_NAMES } from '../../../model/secret-names.js';
import { VERSION } from '../../../version.js';
import type { CliIo } from '../../io.js';
import { checkKeyPair, readFlagFile } from '../../key-pair.js';
import { collect } from '../../registry-flags.js';
import { loadSpec } from '../../spec-arg.js';

interface InstallFlags {
  readonly cluster: string;
  readonly caCert?: string;
  readonly caKey?: string;
  readonly stateDir?: string;
  readonly failurePolicy: string;
  readonly timeout: string;
  readonly namespace: string;
  readonly image: string;
  readonly out: string;
  readonly pullSecrets: boolean;
  readonly insecureRegistry?: string[];
}

export function registerGuardInstall(guard: Command, io: CliIo): void {
  guard
    .command('install')
    .description(
      'render the webhook: Namespace, Deployment, PodDisruptionBudget, Service, TLS Secret, WebhookConfigurations',
    )
    .requiredOption('--cluster <SPEC>', 'cluster spec file or Kubeinit string')
    .option('--ca-cert <FILE>', 'CA certificate that signs the serving certificate (default: the cluster CA)')
    .option('--ca-key <FILE>', 'its key (RSA, PEM)')
    .option('--state-dir <DIR>', 'state directory holding the cluster CA (default $KUBEMIX_STATE_DIR)')
    .option('--failure-policy <Fail|Ignore>', 'what the API server does when the webhook does not answer', 'Fail')
    .option('--timeout <SECONDS>', 'webhook timeout (1-30)', '10')
    .option('--namespace <NAME>', 'namespace of the webhook', 'kubemix-guard')
    .option('--image <IMAGE>', 'kubemix container image', `ghcr.io/kubemix/kubemix:${VERSION}`)
    .option('--out <DIR>', 'directory to write the manifests to', 'kubemix-guard')
    .option('--no-pull-secrets', "no ClusterRole to get Secrets; the webhook then ignores pods' imagePullSecrets")
    .option(
      '--insecure-registry <HOST[:PORT]>',
      'passed to guard serve: reach this registry over plain HTTP (repeatable)',
      collect,
    )
    .action(async (flags: InstallFlags) => runInstall(flags, io));
}

async function runInstall(f: InstallFlags, io: CliIo): Promise<void> {
  if (f.failurePolicy !== 'Fail' && f.failurePolicy !== 'Ignore')
    throw new InputError('flags.failure-policy', `--failure-policy ${f.failurePolicy}: Fail or Ignore`);
  const timeoutSeconds = Number(f.timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30)
    throw new InputError('flags.timeout', `--timeout ${f.timeout}: 1 to 30 seconds`);
  const loaded = loadSpec(f.cluster, {}, io);
  const ca = await loadCa(f, io);
  const tls = signServingCert(ca.cert, ca.key, serviceDnsNames(f.namespace));
  const objects = renderInstall({
    namespace: f.namespace,
    image: f.image,
    caBundle: ca.cert,
    tls,
    specText: loaded.file === undefined ? undefined : readFileSync(loaded.file, 'utf8'),
    specArg: f.cluster,
    failurePolicy: f.failurePolicy,
    timeoutSeconds,
    pullSecrets: f.pullSecrets,
    insecureRegistries: (f.insecureRegistry ?? []).map(parseInsecureRegistry),
  });
  const out = resolve(io.cwd, f.out);
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const secretKinds = new Set(['Secret']);
  const write = (name: string, docs: readonly Record<string, unknown>[], mode: number): void => {
    const path = join(out, name);
    writeFileSync(path, docs.map((d) => stringify(d, { sortMapEntries: false })).join('---\n'), { mode });
    chmodSync(path, mode);
  };
  // The Namespace leads both files: `kubectl apply -f secret.yaml -f guard.yaml` on a fresh cluster would
  // otherwise send the Secret into a namespace that does not exist yet (404; found against kube-apiserver).
  const namespace = objects.filter((o) => o['kind'] === 'Namespace');
  write('secret.yaml', [...namespace, ...objects.filter((o) => secretKinds.has(String(o['kind'])))], 0o600);
  write(
    'guard.yaml',
    objects.filter((o) => !secretKinds.has(String(o['kind']))),
    0o644,
  );
  io.stdout(
    `wrote ${join(f.out, 'guard.yaml')} and ${join(f.out, 'secret.yaml')} (0600: the serving key)\napply with: kubectl apply -f ${join(f.out, 'secret.yaml')} -f ${join(f.out, 'guard.yaml')}\n`,
  );
}

async function loadCa(f: InstallFlags, io: CliIo): Promise<{ cert: string; key: string }> {
  if ((f.caCert === undefined) !== (f.caKey === undefined))
    throw new InputError('flags.ca', '--ca-cert and --ca-key go together');
  if (f.caCert !== undefined && f.caKey !== undefined) {
    const cert = readFlagFile(io.cwd, f.caCert, '--ca-cert', 'guard.ca');
    const key = readFlagFile(io.cwd, f.caKey, '--ca-key', 'guard.ca');
    checkKeyPair(cert, key, {
      code: 'guard.ca',
      certName: `--ca-cert ${f.caCert}`,
      keyName: `--ca-key ${f.caKey}`,
      ca: true,
    });
    return { cert, key };
  }
  const dir = chosenStateDir({ flag: f.stateDir, env: io.env, cwd: io.cwd });
  const secrets = dir === undefined ? undefined : statePaths(dir).secrets;
  if (secrets === undefined || !existsSync(secrets)) {
    throw new InputError('guard.no-ca', 'no CA to sign the serving certificate', {
      hint: 'give --ca-cert and --ca-key, or --state-dir of a cluster kubemix created',
    });
  }
  const store = await SecretStore.open(secrets);
  const cert = store.get(SECRET_NAMES.clusterCaCert);
  const key = store.get(SECRET_NAMES.clusterCaKey);
  if (cert === undefined || key === undefined)
    throw new InputError('guard.no-ca', `${secrets} holds no cluster CA yet`, {
      hint: 'run kubemix up first, or give --ca-cert and --ca-key',
    });
  const names = {
    certName: `${secrets} ${SECRET_NAMES.clusterCaCert}`,
    keyName: `${secrets} ${SECRET_NAMES.clusterCaKey}`,
  };
  checkKeyPair(cert, key, { code: 'guard.ca', ...names, ca: true });
  return { cert, key };
}
