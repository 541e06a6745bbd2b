// Facts for auditing Calico's Windows components (cni.plugin: calico with
// Windows workers). The operator, not kubemix, creates their RBAC, so both
// the roles and the requests come from upstream source:
// tigera/operator pkg/render/node.go (nodeRole, cniPluginRole and their
// bindings) and pkg/render/windows.go (calico-node-windows runs as
// calico-system/calico-node), at v1.42.3, the operator Calico 3.32.1 installs
// (projectcalico/calico charts/tigera-operator/values.yaml). Each request
// below is one the operator's rule comments name as the reason for the rule;
// the roles are transcribed whole for the Calico variant (no Enterprise or
// OpenShift extras).
import { policyFrom, type Policy } from './rbac.js';
import type { NeededRequest } from './types.js';

const OPERATOR = 'tigera/operator pkg/render/node.go @v1.42.3';
export const CALICO_SYSTEM = 'calico-system';
export const CALICO_NODE_SA = 'calico-node';
export const CALICO_CNI_SA = 'calico-cni-plugin';

const CRD_GROUPS = ['projectcalico.org', 'crd.projectcalico.org'];
const IPAM = ['blockaffinities', 'ipamblocks', 'ipamhandles', 'ipamconfigurations', 'ipamconfigs'];
/** calico-node's "monitoring Calico-specific configuration" rule, as the operator lists it. */
const WATCHED = [
  'bgpconfigurations',
  'bgpfilters',
  'bgppeers',
  'blockaffinities',
  'clusterinformations',
  'felixconfigurations',
  'globalnetworkpolicies',
  'globalnetworksets',
  'hostendpoints',
  'ipamblocks',
  'ippools',
  'ipreservations',
  'networkpolicies',
  'networksets',
  'stagedglobalnetworkpolicies',
  'stagedkubernetesnetworkpolicies',
  'stagednetworkpolicies',
  'tiers',
];

/** The two ClusterRoles and bindings the operator creates for calico-node and the CNI plugin (Calico variant). */
export function calicoPolicy(): Policy {
  const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]) => ({
    apiGroups,
    resources,
    verbs,
    ...(resourceNames === undefined ? {} : { resourceNames }),
  });
  const role = (name: string, rules: unknown[]) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules,
  });
  const binding = (name: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace: CALICO_SYSTEM }],
  });
  const node = role(CALICO_NODE_SA, [
    rule(['discovery.k8s.io'], ['endpointslices'], ['list', 'watch']),
    rule([''], ['pods', 'nodes', 'namespaces'], ['get']),
    rule([''], ['endpoints', 'services'], ['watch', 'list', 'get']),
    rule([''], ['nodes/status'], ['patch', 'update']),
    rule(['networking.k8s.io'], ['networkpolicies'], ['watch', 'list']),
    rule(
      ['policy.networking.k8s.io'],
      ['clusternetworkpolicies', 'adminnetworkpolicies', 'baselineadminnetworkpolicies'],
      ['watch', 'list'],
    ),
    rule([''], ['pods', 'namespaces', 'serviceaccounts'], ['watch', 'list']),
    rule([''], ['pods/status'], ['patch']),
    rule([''], ['serviceaccounts/token'], ['create'], [CALICO_CNI_SA]),
    rule([''], ['configmaps'], ['get']),
    rule(CRD_GROUPS, WATCHED, ['get', 'list', 'watch']),
    rule(CRD_GROUPS, ['caliconodestatuses'], ['get', 'list', 'watch', 'update']),
    rule(CRD_GROUPS, ['caliconodestatuses/status'], ['update']),
    rule(CRD_GROUPS, ['globalbgpconfigs', 'globalfelixconfigs'], ['get', 'list', 'watch']),
    rule(
      CRD_GROUPS,
      ['clusterinformations', 'felixconfigurations', 'bgpconfigurations', 'ippools'],
      ['create', 'update'],
    ),
    rule(CRD_GROUPS, ['tiers'], ['create']),
    rule([''], ['nodes'], ['get', 'list', 'watch']),
    rule(CRD_GROUPS, IPAM, ['get', 'list', 'create', 'update', 'delete']),
    rule(CRD_GROUPS, ['blockaffinities'], ['watch']),
    rule(['kubevirt.io'], ['virtualmachineinstancemigrations'], ['get', 'list', 'watch']),
  ]);
  const cni = role(CALICO_CNI_SA, [
    rule([''], ['pods', 'nodes', 'namespaces'], ['get']),
    rule([''], ['pods/status'], ['patch']),
    rule(
      CRD_GROUPS,
      [...IPAM, 'clusterinformations', 'ippools', 'ipreservations'],
      ['get', 'list', 'create', 'update', 'delete'],
    ),
    rule(['kubevirt.io'], ['virtualmachineinstances', 'virtualmachines'], ['get']),
  ]);
  return policyFrom([node, binding(CALICO_NODE_SA), cni, binding(CALICO_CNI_SA)], OPERATOR, false);
}

const need = (verb: string, group: string, resource: string, why: string, extra: Partial<NeededRequest> = {}) => ({
  verb,
  group,
  resource,
  source: `${OPERATOR} (${why})`,
  ...extra,
});

/** calico-node-windows (node, felix, confd containers): what the operator's calico-node role says it needs. */
export function calicoNodeWindowsRequests(node: string): NeededRequest[] {
  const own = { name: node } as const;
  return [
    need('watch', '', 'nodes', 'monitors nodes for networking configuration'),
    need('get', '', 'nodes', 'its own Node', own),
    need('patch', '', 'nodes/status', 'some information is stored on the node status', own),
    need('list', 'discovery.k8s.io', 'endpointslices', 'service-based network policy rules'),
    need('watch', 'networking.k8s.io', 'networkpolicies', 'enforcing network policies'),
    need('watch', '', 'pods', 'policy metadata'),
    need('watch', '', 'namespaces', 'policy metadata'),
    need('watch', '', 'serviceaccounts', 'policy metadata'),
    need('watch', '', 'services', 'Typha endpoints and service IPs'),
    need('get', '', 'configmaps', 'pool auto-detection on kubeadm'),
    need('watch', 'crd.projectcalico.org', 'felixconfigurations', 'Calico configuration'),
    need('watch', 'crd.projectcalico.org', 'ippools', 'Calico configuration'),
    need('watch', 'crd.projectcalico.org', 'blockaffinities', 'route aggregation'),
    need('create', 'crd.projectcalico.org', 'ipamblocks', 'IPAM: the VXLAN tunnel address'),
    need('update', 'crd.projectcalico.org', 'blockaffinities', 'IPAM: strict affinity blocks'),
    need('create', '', 'serviceaccounts/token', 'tokens for the CNI plugin', {
      namespace: CALICO_SYSTEM,
      name: CALICO_CNI_SA,
    }),
  ];
}

/** calico.exe (the CNI plugin the kubelet runs on every pod add/delete), with the token calico-node minted. */
export function calicoCniRequests(): NeededRequest[] {
  return [
    need('get', '', 'pods', 'the CNI plugin gets pods'),
    need('get', '', 'namespaces', 'the CNI plugin gets namespaces'),
    need('get', '', 'nodes', 'the CNI plugin gets nodes'),
    need('patch', '', 'pods/status', 'the allocated IP onto the pod'),
    need('get', 'crd.projectcalico.org', 'ippools', 'IPAM'),
    need('update', 'crd.projectcalico.org', 'ipamblocks', 'IPAM'),
    need('create', 'crd.projectcalico.org', 'ipamhandles', 'IPAM'),
    need('delete', 'crd.projectcalico.org', 'ipamhandles', 'IPAM'),
  ];
}
