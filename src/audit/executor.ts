// The API requests kubemix's own tasks make with kubectl on the first
// controller (read from the tasks' scripts): applying the cluster manifests
// (server-side apply: get and patch of every object), labelling and deleting nodes, waiting for rollouts and CRDs. Minting tokens is its own component (components.ts).
import type { Plan } from '../plan/types.js';
import type { NeededRequest } from './types.js';

type Obj = Record<string, unknown>;

/** Kind → (API group, resource) for the kinds kubemix's manifests hold. */
const KINDS: Record<string, readonly [string, string]> = {
  Namespace: ['', 'namespaces'],
  ServiceAccount: ['', 'serviceaccounts'],
  ConfigMap: ['', 'configmaps'],
  Secret: ['', 'secrets'],
  ClusterRole: ['rbac.authorization.k8s.io', 'clusterroles'],
  ClusterRoleBinding: ['rbac.authorization.k8s.io', 'clusterrolebindings'],
  Role: ['rbac.authorization.k8s.io', 'roles'],
  RoleBinding: ['rbac.authorization.k8s.io', 'rolebindings'],
  DaemonSet: ['apps', 'daemonsets'],
  Deployment: ['apps', 'deployments'],
  RuntimeClass: ['node.k8s.io', 'runtimeclasses'],
  Installation: ['operator.tigera.io', 'installations'],
  FelixConfiguration: ['crd.projectcalico.org', 'felixconfigurations'],
  IPAMConfig: ['crd.projectcalico.org', 'ipamconfigs'],
  ValidatingAdmissionPolicy: ['admissionregistration.k8s.io', 'validatingadmissionpolicies'],
  ValidatingAdmissionPolicyBinding: ['admissionregistration.k8s.io', 'validatingadmissionpolicybindings'],
};

const PATTERNS: readonly [RegExp, (m: RegExpExecArray) => NeededRequest[]][] = [
  [/ delete node /, () => [{ verb: 'delete', group: '', resource: 'nodes', source: 'kubectl delete node (reset)' }]],
  [/ label --overwrite node /, () => [{ verb: 'patch', group: '', resource: 'nodes', source: 'kubectl label node' }]],
  [/ get nodes /, () => [{ verb: 'list', group: '', resource: 'nodes', source: 'kubectl get nodes' }]],
  [/ get daemonset /, () => [{ verb: 'get', group: 'apps', resource: 'daemonsets', source: 'kubectl get daemonset' }]],
  [
    / get deployment /,
    () => [{ verb: 'get', group: 'apps', resource: 'deployments', source: 'kubectl get deployment' }],
  ],
  [
    / rollout status deployment/,
    () => [{ verb: 'watch', group: 'apps', resource: 'deployments', source: 'kubectl rollout status' }],
  ],
  [
    / rollout status daemonset/,
    () => [{ verb: 'watch', group: 'apps', resource: 'daemonsets', source: 'kubectl rollout status daemonset' }],
  ],
  [
    / wait --for=condition=Available [^\n]*tigerastatus/,
    () => [
      { verb: 'watch', group: 'operator.tigera.io', resource: 'tigerastatuses', source: 'kubectl wait tigerastatus' },
    ],
  ],
  [
    / wait --for=condition=Ready [^\n]*node\//,
    () => [{ verb: 'watch', group: '', resource: 'nodes', source: 'kubectl wait node' }],
  ],
  [
    / wait --for=condition=Established/,
    () => [
      {
        verb: 'watch',
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        source: 'kubectl wait crd',
      },
    ],
  ],
  [
    / annotate --overwrite namespace /,
    () => [{ verb: 'patch', group: '', resource: 'namespaces', source: 'kubectl annotate namespace' }],
  ],
];

export function executorRequests(
  plan: Plan,
  manifests: readonly { readonly object: Obj; readonly file: string }[],
): NeededRequest[] {
  const scripts = plan.tasks
    .map((t) => t.apply.script)
    .filter((s) => s.includes('admin.conf') && s.includes('kubectl'));
  const out: NeededRequest[] = [];
  for (const s of scripts) {
    for (const [re, make] of PATTERNS) {
      const m = re.exec(s);
      if (m !== null) out.push(...make(m));
    }
  }
  if (scripts.some((s) => / apply --server-side/.test(s))) {
    for (const { object, file } of manifests) {
      const kind = KINDS[String(object['kind'])];
      if (kind === undefined) continue;
      for (const verb of ['get', 'patch'])
        out.push({ verb, group: kind[0], resource: kind[1], source: `kubectl apply --server-side -f ${file}` });
    }
  }
  const seen = new Set<string>();
  return out.filter((r) => {
    const key = `${r.verb} ${r.group} ${r.resource} ${r.name ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
