// The namespace of verify's probe pods (and of the demo): removed before a
// run (a crashed run's leftover) and after it, created fresh. What a real API
// server answers here: DELETE of a namespace already being deleted is 409
// Conflict ("the system is ensuring all content is removed"), of one that is
// gone 404; POST of a namespace that still exists, Terminating included, is
// 409 AlreadyExists; content cannot be created in a Terminating namespace
// (403). A namespace stays Terminating while its pods stop and finalizers
// run; the namespace controller says why in status.conditions
// (NamespaceDeletionContentFailure, NamespaceFinalizersRemaining, …).
import { statusOf } from '../../kube/client.js';
import { KubeError } from '../../kube/errors.js';
import { retried, type Apis } from './api.js';
import type { NamespaceObject } from './objects.js';
import { waitFor, type Listed, type WatchTarget } from './watch.js';

/** How long a namespace may take to go away. */
export const NAMESPACE_GONE_MS = 120_000;

export interface NamespaceWait {
  readonly signal: AbortSignal;
  readonly pollMs: number;
  readonly goneMs?: number;
}

function target(a: Apis, name: string): WatchTarget<NamespaceObject> {
  const fieldSelector = `metadata.name=${name}`;
  return {
    path: '/api/v1/namespaces',
    query: { fieldSelector },
    list: async () => (await a.core.listNamespace({ fieldSelector })) as Listed<NamespaceObject>,
  };
}

/** Why a namespace is still there, in a line: its phase and the namespace controller's failing conditions. */
export function stuckReason(ns: NamespaceObject | undefined): string {
  const phase = ns?.status?.phase ?? 'Active';
  const why = (ns?.status?.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => `${c.type ?? '?'}: ${c.message ?? c.reason ?? ''}`.trim());
  const finalizers = phase === 'Terminating' ? (ns?.spec?.finalizers ?? []) : [];
  return [phase, ...why, ...(finalizers.length > 0 ? [`finalizers ${finalizers.join(', ')}`] : [])].join('; ');
}

/** Deletes a namespace kubemix made; with `wait`, until it is gone, or a KubeError saying why it is not. */
export async function removeNamespace(a: Apis, name: string, wait: boolean, w: NamespaceWait): Promise<void> {
  try {
    await retried(w.signal, () => a.core.deleteNamespace({ name, propagationPolicy: 'Background' }));
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return;
    if (status !== 409) throw error;
  }
  if (!wait) return;
  const ms = w.goneMs ?? NAMESPACE_GONE_MS;
  const left = await waitFor(a, target(a, name), (items) => items.length === 0, {
    ms,
    signal: w.signal,
    pollMs: w.pollMs,
  });
  if (left.length > 0)
    throw new KubeError(
      'kube.namespace-stuck',
      `namespace ${name} (left by an earlier run) is still there after ${Math.round(ms / 1000)} s: ${stuckReason(left[0])}`,
      {
        hint: `see \`kubectl get namespace ${name} -o yaml\` (status.conditions): a stuck finalizer or an API service that is down keeps it Terminating`,
      },
    );
}

/** Creates a namespace; a 409 for one still there (Terminating: an earlier run's) waits for it to go, once. */
export async function createNamespace(
  a: Apis,
  name: string,
  manifest: Readonly<Record<string, unknown>>,
  w: NamespaceWait,
): Promise<NamespaceObject> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await retried(w.signal, () => a.core.createNamespace({ body: manifest as never }))) as NamespaceObject;
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      const existing = await retried(w.signal, () => a.core.readNamespace({ name })).catch((e: unknown) => {
        if (statusOf(e) === 404) return undefined;
        throw e;
      });
      if (existing === undefined) continue;
      const terminating = existing.metadata?.deletionTimestamp != null || existing.status?.phase === 'Terminating';
      if (!terminating || attempt > 0)
        throw new KubeError(
          'kube.namespace-busy',
          `namespace ${name} already exists (${stuckReason(existing as NamespaceObject)}), although this run deleted it: is another kubemix verify running against this cluster?`,
          { status: 409, hint: `wait for the other run, or delete it: kubectl delete namespace ${name}` },
        );
      await removeNamespace(a, name, true, w);
    }
  }
}
