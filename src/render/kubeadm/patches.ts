// Probe slack for the control-plane static pods (spec.kubernetes.controlPlaneProbes),
// as kubeadm patches: one strategic merge patch per component in a folder that
// init, control-plane joins and upgrades name (`patches.directory`), so every
// manifest kubeadm writes, then and later, carries it. kubeadm's v1beta4
// `timeouts` cover its own waits and the startup probe's window, not each
// probe's timeout (15 s) nor how many failed liveness probes restart a
// component (8, 10 s apart): cmd/kubeadm/app/util/staticpod/utils.go.
import { stringify } from 'yaml';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../types.js';

export const KUBEADM_PATCHES_DIR = '/etc/kubemix/kubeadm/patches';

/**
 * The probes kubeadm gives each static pod (cmd/kubeadm/app/phases/etcd/local.go,
 * controlplane/manifests.go, 1.35 and 1.36): a patch may only touch probes the
 * container has, or the merge adds a probe without a handler.
 */
const COMPONENT_PROBES = {
  etcd: ['livenessProbe', 'readinessProbe', 'startupProbe'],
  'kube-apiserver': ['livenessProbe', 'readinessProbe', 'startupProbe'],
  'kube-controller-manager': ['livenessProbe', 'startupProbe'],
  'kube-scheduler': ['livenessProbe', 'readinessProbe', 'startupProbe'],
} as const;

/** Whether the cluster's control planes get probe patches. */
export function hasProbePatches(model: ClusterModel): boolean {
  return model.kubeadm.controlPlaneProbes !== undefined;
}

/** One patch file per control-plane component for a control-plane node; none without the spec's probe settings. */
export function renderProbePatches(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  const p = model.kubeadm.controlPlaneProbes;
  if (p === undefined || node.role !== 'control-plane') return [];
  return Object.entries(COMPONENT_PROBES).map(([component, probes]) => {
    const container: Record<string, unknown> = { name: component };
    for (const probe of probes) {
      const liveness = probe === 'livenessProbe' && p.livenessFailureThreshold !== undefined;
      container[probe] = {
        ...(p.timeoutSeconds === undefined ? {} : { timeoutSeconds: p.timeoutSeconds }),
        ...(liveness ? { failureThreshold: p.livenessFailureThreshold } : {}),
      };
    }
    const used = Object.fromEntries(Object.entries(container).filter(([, v]) => !isEmpty(v)));
    return {
      node: node.name,
      // kubeadm reads `<target>[suffix][+patchtype].<yaml|json>` (kubeadm's patches package).
      remotePath: `${KUBEADM_PATCHES_DIR}/${component}+strategic.yaml`,
      mode: '0644',
      owner: 'root:root',
      content: `# Rendered by kubemix from spec.kubernetes.controlPlaneProbes; re-plan instead of editing.\n${stringify({ spec: { containers: [used] } })}`,
    };
  });
}

function isEmpty(v: unknown): boolean {
  return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
}
