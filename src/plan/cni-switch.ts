// Switching the CNI of a running cluster is not supported (flannel and
// Calico own the same pod range, node annotations and HNS networks; upstream
// documents no in-place migration for Windows nodes). A run's journal shows
// which CNI the cluster was deployed with, by the tasks only one CNI plans:
// Calico's operator (applied before the cluster manifests) or, without it,
// the cluster manifests done (they apply flannel). Pure: the executor passes
// what its journal holds.
import { InputError } from '../errors.js';
import type { Plan } from './types.js';

type Cni = Plan['cluster']['cni']['plugin'];

/** The CNI the journal's done tasks show, or undefined when no cluster manifests were applied yet. */
export function deployedCni(done: readonly string[]): { cni: Cni; evidence: string } | undefined {
  const calico = done.find((id) => id.endsWith('/calico-operator') || id.endsWith('/win-calico-node'));
  if (calico !== undefined) return { cni: 'calico', evidence: calico };
  const flannel = done.find(
    (id) => id.endsWith('/cluster-manifests') || id.endsWith('/win-flanneld') || id.endsWith('/win-flannel-pod'),
  );
  return flannel === undefined ? undefined : { cni: 'flannel', evidence: flannel };
}

/**
 * Refuses a plan that deploys a CNI (it applies the cluster manifests) onto a
 * cluster the journal shows running the other one. Reset plans pass: `down`
 * must work whatever the spec now says.
 */
export function assertSameCni(plan: Plan, done: readonly string[], journalPath: string): void {
  if (!plan.tasks.some((t) => t.name === 'cluster-manifests')) return;
  const deployed = deployedCni(done);
  const wanted = plan.cluster.cni.plugin;
  if (deployed === undefined || deployed.cni === wanted) return;
  throw new InputError(
    'plan.cni-switch',
    `the cluster was deployed with ${deployed.cni} (${journalPath}: ${deployed.evidence} done) and this plan uses ${wanted}: switching the CNI of a running cluster is not supported`,
    {
      path: 'spec.cni.plugin',
      hint: `keep cni.plugin: ${deployed.cni}, or remove the cluster (kubemix down) and deploy it again with ${wanted}`,
    },
  );
}
