// Cluster objects Windows nodes need from the Linux side (Kubernetes docs,
// "Guide for scheduling Windows containers" and "RuntimeClass"):
// one RuntimeClass per Windows build, placing pods by os/arch/build and
// tolerating the os=windows taint; least-privilege RBAC for the Windows
// flanneld, which runs as a service with its own ServiceAccount token.
import { WINDOWS } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { FLANNEL_NAMESPACE } from './flannel.js';

type Obj = Record<string, unknown>;
export const WINDOWS_FLANNEL_SA = 'flannel-windows';

export function runtimeClasses(model: ClusterModel): Obj[] {
  const builds = new Set(model.nodes.flatMap((n) => (n.windowsBuild === undefined ? [] : [n.windowsBuild])));
  return WINDOWS.filter((w) => builds.has(w.build)).map((w) => ({
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: w.os },
    // containerd's default Windows runtime: process isolation, image build must match the node's.
    handler: 'runhcs-wcow-process',
    scheduling: {
      nodeSelector: {
        'kubernetes.io/os': 'windows',
        'kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/windows-build': w.build,
      },
      tolerations: [{ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' }],
    },
  }));
}

export function windowsFlannelRbac(): Obj[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: WINDOWS_FLANNEL_SA, namespace: FLANNEL_NAMESPACE } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: WINDOWS_FLANNEL_SA },
      rules: [
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: WINDOWS_FLANNEL_SA },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: WINDOWS_FLANNEL_SA },
      subjects: [{ kind: 'ServiceAccount', name: WINDOWS_FLANNEL_SA, namespace: FLANNEL_NAMESPACE }],
    },
  ];
}
