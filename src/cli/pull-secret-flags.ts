// How `guard serve` reaches the Kubernetes API for pods' imagePullSecrets:
// --kubeconfig FILE outside the cluster, else the pod's service account when
// running in one, else not at all (said once in the log, not an error: the
// webhook still works with the operator's own credentials). --no-pull-secrets
// turns it off, e.g. when the ClusterRole that allows reading Secrets is not
// wanted.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { inClusterAccess, kubeconfigAccess, type KubeAccess } from '../kube/config.js';
import type { CliIo } from './io.js';

export function withPullSecretOptions(command: Command): Command {
  return command
    .option(
      '--kubeconfig <FILE>',
      "read pods' imagePullSecrets through this kubeconfig (default: the in-cluster service account)",
    )
    .option('--no-pull-secrets', 'never read imagePullSecrets (no access to Secrets needed)');
}

/** undefined: pull secrets are not read. Throws a KubeError (exit 2) for an unusable --kubeconfig. */
export function kubeAccessFromFlags(opts: Record<string, unknown>, io: CliIo): KubeAccess | undefined {
  if (opts['pullSecrets'] === false || opts['offline'] === true) return undefined;
  const file = opts['kubeconfig'];
  if (typeof file === 'string') return kubeconfigAccess(resolve(io.cwd, file));
  return inClusterAccess(io.env);
}
