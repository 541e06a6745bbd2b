// The Node authorizer as kube-apiserver runs it for kubelet credentials
// (user system:node:<name>, group system:nodes), with
// AuthorizeNodeWithSelectors on (beta and on by default since 1.32, so in
// every release kubemix supports): k8s.io/kubernetes
// plugin/pkg/auth/authorizer/node/node_authorizer.go, and the NodeRestriction
// admission plugin kubeadm enables (a node may change only its own Node).
// Objects a node reaches through the graph of pods bound to it (secrets,
// configmaps, volumes, ServiceAccount tokens) are allowed for those objects
// only; everything else falls back to the system:node rules it evaluates.
import { ruleMatches } from './rbac.js';
import type { ApiRequest, PolicyRule } from './types.js';

const r = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });

/** Requests outside the graph that the Node authorizer allows any node (its NodeRules subset). */
const NODE_RULES: readonly PolicyRule[] = [
  r(['authentication.k8s.io'], ['tokenreviews'], ['create']),
  r(['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews'], ['create']),
  r([''], ['services'], ['get', 'list', 'watch']),
  r(['', 'events.k8s.io'], ['events'], ['create', 'update', 'patch']),
  r(['certificates.k8s.io'], ['certificatesigningrequests'], ['create', 'get', 'list', 'watch']),
  r([''], ['endpoints'], ['get']),
  r(['node.k8s.io'], ['runtimeclasses'], ['get', 'list', 'watch']),
  r(['storage.k8s.io'], ['csidrivers'], ['get', 'list', 'watch']),
];

/** Resource → the scope the Node authorizer demands for it, per verb. */
const SCOPED: Record<string, { readonly verbs: readonly string[]; readonly scope: NonNullable<ApiRequest['scope']> }> =
  {
    nodes: { verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'], scope: 'own-node' },
    'nodes/status': { verbs: ['update', 'patch'], scope: 'own-node' },
    pods: { verbs: ['get', 'list', 'watch', 'create', 'delete'], scope: 'node-pods' },
    'pods/status': { verbs: ['update', 'patch'], scope: 'node-pods' },
    'pods/eviction': { verbs: ['create'], scope: 'node-pods' },
    secrets: { verbs: ['get', 'list', 'watch'], scope: 'pod-referenced' },
    configmaps: { verbs: ['get', 'list', 'watch'], scope: 'pod-referenced' },
    persistentvolumeclaims: { verbs: ['get'], scope: 'pod-referenced' },
    persistentvolumes: { verbs: ['get'], scope: 'pod-referenced' },
    'serviceaccounts/token': { verbs: ['create'], scope: 'pod-referenced' },
    leases: { verbs: ['get', 'create', 'update', 'patch', 'delete'], scope: 'own-node' },
    csinodes: { verbs: ['get', 'create', 'update', 'patch', 'delete'], scope: 'own-node' },
  };

export interface NodeDecision {
  readonly allowed: boolean;
  readonly why: string;
}

/** The Node authorizer's answer for a kubelet credential of `node`. */
export function nodeAuthorizer(node: string, req: ApiRequest): NodeDecision {
  const scoped = SCOPED[req.resource];
  const groupOk =
    req.resource === 'leases'
      ? req.group === 'coordination.k8s.io'
      : req.resource === 'csinodes'
        ? req.group === 'storage.k8s.io'
        : req.group === '';
  if (scoped !== undefined && groupOk) {
    if (!scoped.verbs.includes(req.verb))
      return { allowed: false, why: `Node authorizer: ${req.verb} ${req.resource} is not a node's` };
    if (req.scope !== scoped.scope) {
      const what =
        scoped.scope === 'own-node'
          ? `only its own Node (${node})`
          : scoped.scope === 'node-pods'
            ? 'only pods bound to it'
            : 'only objects its pods reference';
      return {
        allowed: false,
        why: `Node authorizer: a node may ${req.verb} ${req.resource} of ${what} (AuthorizeNodeWithSelectors)`,
      };
    }
    if (req.resource === 'leases' && req.namespace !== 'kube-node-lease')
      return { allowed: false, why: 'Node authorizer: leases only in kube-node-lease' };
    return { allowed: true, why: 'Node authorizer' };
  }
  if (NODE_RULES.some((rule) => ruleMatches(rule, req)))
    return { allowed: true, why: 'Node authorizer (system:node rules)' };
  return { allowed: false, why: 'Node authorizer: no opinion (not a node request)' };
}
