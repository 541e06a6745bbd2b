// Resolve "1.36" / "2.3" to the matrix's pinned patch releases.
import { COMPONENTS, IMAGES, KUBERNETES, containerdLine, kubernetesRelease } from '../matrix/index.js';
import { minorOf } from '../spec/rules/versions.js';
import type { ClusterSpec } from '../spec/types.js';

export interface ResolvedVersions {
  readonly kubernetes: string;
  readonly kubernetesMinor: string;
  readonly kubeadmApi: string;
  readonly containerd: string;
  readonly containerdConfigVersion: string;
  readonly pause: string;
  readonly flannel: string;
  readonly runc: string;
  readonly cniPlugins: string;
  readonly crictl: string;
}

function pinned(written: string, patch: string | undefined): string {
  return written.split('.').length === 3 ? written : (patch ?? written);
}

export function resolveVersions(spec: ClusterSpec): ResolvedVersions {
  const k8s = kubernetesRelease(minorOf(spec.kubernetesVersion));
  const ctr = containerdLine(minorOf(spec.containerdVersion));
  return {
    kubernetes: pinned(spec.kubernetesVersion, k8s?.patch),
    kubernetesMinor: minorOf(spec.kubernetesVersion),
    kubeadmApi: k8s?.kubeadmApis[0] ?? 'v1beta4',
    containerd: pinned(spec.containerdVersion, ctr?.patch),
    containerdConfigVersion: String(ctr?.configVersion ?? 3),
    pause: IMAGES.pause.tag,
    flannel: COMPONENTS.flannel,
    runc: COMPONENTS.runc,
    cniPlugins: COMPONENTS.cniPlugins,
    // The spec's pin first (a bundle built without the matrix's release); an unknown minor is refused
    // by the spec rules, the matrix's newest crictl stands in meanwhile.
    crictl: spec.crictlVersion ?? k8s?.crictl ?? KUBERNETES.at(-1)?.crictl ?? '',
  };
}
