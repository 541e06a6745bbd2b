// Facts from upstream source the audit relies on: the RBAC objects
// Kubernetes and kubeadm create in every cluster (for the credentials
// kubemix's components use), and the API requests each upstream component
// makes, each with the file it comes from. Facts, not code: when upstream
// changes, these lines change with a new source.
import { policyFrom, type Policy } from './rbac.js';
import type { NeededRequest } from './types.js';

const CLUSTER_ROLES =
  'kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml';
const KUBEADM_PROXY = 'kubernetes/kubernetes cmd/kubeadm/app/phases/addons/proxy/proxy.go';
const KUBEADM_DNS = 'kubernetes/kubernetes cmd/kubeadm/app/phases/addons/dns/manifests.go';
const KUBEADM_ADMIN =
  'kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go (EnsureAdminClusterRoleBinding)';
const KUBEADM_TLS = 'kubernetes/kubernetes cmd/kubeadm/app/phases/bootstraptoken/node/tlsbootstrap.go';

const rbac = 'rbac.authorization.k8s.io/v1';
const clusterRole = (name: string, rules: unknown[]): Record<string, unknown> => ({
  apiVersion: rbac,
  kind: 'ClusterRole',
  metadata: { name },
  rules,
});
const binding = (name: string, role: string, subject: Record<string, string>): Record<string, unknown> => ({
  apiVersion: rbac,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [subject],
});

/**
 * The bootstrap RBAC that bears on kubemix's credentials. The discovery and
 * self-review roles every authenticated user holds (system:discovery,
 * system:basic-user, system:public-info-viewer) grant no resource access and
 * are left out.
 */
export function upstreamPolicy(): Policy {
  return mergeAll([
    [
      [
        clusterRole('system:node-proxier', [
          { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] },
          { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ]),
      ],
      CLUSTER_ROLES,
    ],
    [
      [
        binding('kubeadm:node-proxier', 'system:node-proxier', {
          kind: 'ServiceAccount',
          name: 'kube-proxy',
          namespace: 'kube-system',
        }),
      ],
      KUBEADM_PROXY,
    ],
    [
      [
        clusterRole('system:coredns', [
          { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ]),
        binding('system:coredns', 'system:coredns', {
          kind: 'ServiceAccount',
          name: 'coredns',
          namespace: 'kube-system',
        }),
      ],
      KUBEADM_DNS,
    ],
    [[clusterRole('cluster-admin', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }])], CLUSTER_ROLES],
    [
      [binding('kubeadm:cluster-admins', 'cluster-admin', { kind: 'Group', name: 'kubeadm:cluster-admins' })],
      KUBEADM_ADMIN,
    ],
    [
      [
        clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [
          {
            apiGroups: ['certificates.k8s.io'],
            resources: ['certificatesigningrequests/selfnodeclient'],
            verbs: ['create'],
          },
        ]),
        binding(
          'kubeadm:node-autoapprove-certificate-rotation',
          'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
          { kind: 'Group', name: 'system:nodes' },
        ),
      ],
      `${CLUSTER_ROLES}; ${KUBEADM_TLS}`,
    ],
  ]);
}

function mergeAll(parts: readonly [Record<string, unknown>[], string][]): Policy {
  const policies = parts.map(([objects, source]) => policyFrom(objects, source, false));
  return { roles: policies.flatMap((p) => p.roles), bindings: policies.flatMap((p) => p.bindings) };
}

const KUBELET = 'kubernetes/kubernetes pkg/kubelet';
const need = (
  verb: string,
  group: string,
  resource: string,
  source: string,
  extra: Partial<NeededRequest> = {},
): NeededRequest => ({ verb, group, resource, source, ...extra });

/** The kubelet's requests (its own Node, its pods and what they reference). */
export function kubeletRequests(node: string): NeededRequest[] {
  const own = { name: node, scope: 'own-node' } as const;
  return [
    need('create', '', 'nodes', `${KUBELET}/kubelet_node_status.go (registerWithAPIServer)`, own),
    need('get', '', 'nodes', `${KUBELET}/kubelet_node_status.go`, own),
    need('watch', '', 'nodes', `${KUBELET}/kubelet.go (node informer, metadata.name=<node>)`, own),
    need('patch', '', 'nodes/status', `${KUBELET}/kubelet_node_status.go (updateNodeStatus)`, own),
    need('update', 'coordination.k8s.io', 'leases', 'kubernetes/component-helpers apimachinery/lease/controller.go', {
      ...own,
      namespace: 'kube-node-lease',
    }),
    need('watch', '', 'pods', `${KUBELET}/config/apiserver.go (spec.nodeName=<node>)`, { scope: 'node-pods' }),
    need('patch', '', 'pods/status', `${KUBELET}/status/status_manager.go`, { scope: 'node-pods' }),
    need('get', '', 'secrets', `${KUBELET}/secret/secret_manager.go`, { scope: 'pod-referenced' }),
    need('get', '', 'configmaps', `${KUBELET}/configmap/configmap_manager.go`, { scope: 'pod-referenced' }),
    need('create', '', 'serviceaccounts/token', `${KUBELET}/token/token_manager.go (projected tokens)`, {
      scope: 'pod-referenced',
    }),
    need('watch', '', 'services', `${KUBELET}/kubelet.go (service lister)`),
    need(
      'create',
      'certificates.k8s.io',
      'certificatesigningrequests',
      'kubernetes/client-go util/certificate/certificate_manager.go (rotation)',
    ),
    need(
      'create',
      'certificates.k8s.io',
      'certificatesigningrequests/selfnodeclient',
      'kubernetes/kubernetes pkg/controller/certificates/approver/sarapprove.go (checked for its renewal CSRs)',
    ),
    need('create', '', 'events', `${KUBELET}/kubelet.go (event recorder)`),
  ];
}

const PROXY = 'kubernetes/kubernetes cmd/kube-proxy/app/server.go';
const PROXY_CONFIG = 'kubernetes/kubernetes pkg/proxy/config/config.go';

/** kube-proxy (iptables/nftables on Linux, kernelspace on Windows): services, EndpointSlices, its Node. */
export function kubeProxyRequests(node: string): NeededRequest[] {
  const own = { name: node, scope: 'own-node' } as const;
  return [
    need('list', '', 'services', `${PROXY_CONFIG} (ServiceConfig)`),
    need('watch', '', 'services', `${PROXY_CONFIG} (ServiceConfig)`),
    need('list', 'discovery.k8s.io', 'endpointslices', `${PROXY_CONFIG} (EndpointSliceConfig)`),
    need('watch', 'discovery.k8s.io', 'endpointslices', `${PROXY_CONFIG} (EndpointSliceConfig)`),
    need('get', '', 'nodes', `${PROXY} (node IPs and pod CIDR of its Node)`, own),
    need('list', '', 'nodes', `${PROXY} (node informer, metadata.name=<node>)`, own),
    need('watch', '', 'nodes', `${PROXY} (node informer, metadata.name=<node>)`, own),
    need('create', 'events.k8s.io', 'events', `${PROXY} (event broadcaster)`),
    need('patch', 'events.k8s.io', 'events', `${PROXY} (event broadcaster)`),
  ];
}

const FLANNEL = 'flannel-io/flannel pkg/subnet/kube/kube.go @cdf7605';

/** flanneld's kube subnet manager: every Node (leases of all nodes), and its own Node's annotations. */
export function flanneldRequests(node: string, podNamespace: string | undefined): NeededRequest[] {
  const own = { name: node, scope: 'own-node' } as const;
  return [
    need('list', '', 'nodes', `${FLANNEL}:203 (node informer, fields.Everything)`),
    need('watch', '', 'nodes', `${FLANNEL}:203 (node informer, fields.Everything)`),
    need('get', '', 'nodes', `${FLANNEL}:354,701,736`, own),
    need('patch', '', 'nodes/status', `${FLANNEL}:482,673`, own),
    // Without NODE_NAME flanneld reads its own pod for the node name.
    ...(podNamespace === undefined
      ? []
      : [
          need('get', '', 'pods', `${FLANNEL}:108 (POD_NAME/POD_NAMESPACE, no NODE_NAME)`, { namespace: podNamespace }),
        ]),
  ];
}

const COREDNS = 'coredns/coredns plugin/kubernetes/controller.go';

/** CoreDNS's kubernetes plugin as kubeadm configures it (`pods insecure`: no pod watch). */
export function corednsRequests(): NeededRequest[] {
  return ['list', 'watch'].flatMap((verb) => [
    need(verb, '', 'services', COREDNS),
    need(verb, 'discovery.k8s.io', 'endpointslices', COREDNS),
    need(verb, '', 'namespaces', COREDNS),
  ]);
}

/** kubemix's admission webhook: reads the imagePullSecrets pods name (src/guard/pull-secrets.ts), nothing else. */
export function guardRequests(): NeededRequest[] {
  return [need('get', '', 'secrets', 'kubemix src/guard/pull-secrets.ts (imagePullSecrets of the pod under review)')];
}
