// Cluster objects Windows nodes need from the Linux side (Kubernetes docs,
// "Guide for scheduling Windows containers" and "RuntimeClass"):
// one RuntimeClass per Windows build, placing pods by os/arch/build and
// tolerating the os=windows taint; least-privilege RBAC for the Windows
// flanneld (a HostProcess pod with its own ServiceAccount), and an admission
// policy holding each of its tokens to the Node its pod runs on.
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

/** The ValidatingAdmissionPolicy (and its binding) that keeps flannel-windows' writes on its own Node. */
export const OWN_NODE_POLICY = 'kubemix-flannel-windows-own-node';

/** The user extra a pod-bound token carries since 1.32 (ServiceAccountTokenPodNodeInfo, GA): its pod's Node. */
export const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';

/**
 * RBAC cannot say "only your own Node": flannel-windows may patch every
 * Node's status. Its tokens name their pod's Node (NODE_NAME_EXTRA), so this
 * policy denies an update of any other Node or Node status, and any update
 * from a token that names no Node (an old minted token, one made by hand):
 * a token stolen from one node moves no other node's flannel annotations.
 * ValidatingAdmissionPolicy is GA since 1.30; the extra since 1.32.
 */
function ownNodePolicy(): Obj[] {
  const user = `system:serviceaccount:${FLANNEL_NAMESPACE}:${WINDOWS_FLANNEL_SA}`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: OWN_NODE_POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes', 'nodes/status'] },
          ],
        },
        matchConditions: [{ name: 'flannel-windows', expression: `request.userInfo.username == '${user}'` }],
        validations: [
          {
            expression: `'${NODE_NAME_EXTRA}' in request.userInfo.extra && request.userInfo.extra['${NODE_NAME_EXTRA}'].size() == 1 && request.userInfo.extra['${NODE_NAME_EXTRA}'][0] == object.metadata.name`,
            message: `${user} may change only the Node its pod runs on`,
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: OWN_NODE_POLICY },
      spec: { policyName: OWN_NODE_POLICY, validationActions: ['Deny'] },
    },
  ];
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
    ...ownNodePolicy(),
  ];
}
