// A small RBAC evaluator (the rules of k8s.io/kubernetes
// plugin/pkg/auth/authorizer/rbac: a request is allowed when a rule of a
// role bound to the user, one of its groups or its ServiceAccount matches
// verb, API group, resource and, if the rule names any, the object's name).
// Pure: it reads RBAC objects as parsed from YAML.
import type { ApiRequest, PolicyRule } from './types.js';

type Obj = Record<string, unknown>;

export interface Subject {
  readonly kind: 'User' | 'Group' | 'ServiceAccount';
  readonly name: string;
  readonly namespace?: string;
}

export interface Role {
  readonly kind: 'ClusterRole' | 'Role';
  readonly name: string;
  readonly namespace?: string;
  readonly rules: readonly PolicyRule[];
  /** Where the object comes from: a rendered manifest, or an upstream default (its source). */
  readonly origin: string;
  readonly rendered: boolean;
}

export interface Binding {
  readonly kind: 'ClusterRoleBinding' | 'RoleBinding';
  readonly name: string;
  readonly namespace?: string;
  readonly roleRef: { readonly kind: 'ClusterRole' | 'Role'; readonly name: string };
  readonly subjects: readonly Subject[];
  readonly origin: string;
  readonly rendered: boolean;
}

export interface Policy {
  readonly roles: readonly Role[];
  readonly bindings: readonly Binding[];
}

/** Who a credential authenticates as (user name and groups). */
export interface UserInfo {
  readonly user: string;
  readonly groups: readonly string[];
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const meta = (o: Obj): Obj =>
  typeof o['metadata'] === 'object' && o['metadata'] !== null ? (o['metadata'] as Obj) : {};
const optNs = (o: Obj): { namespace?: string } => {
  const ns = meta(o)['namespace'];
  return typeof ns === 'string' ? { namespace: ns } : {};
};

/** The Roles, ClusterRoles and bindings among Kubernetes objects (other kinds are skipped). */
export function policyFrom(objects: readonly Obj[], origin: string, rendered: boolean): Policy {
  const roles: Role[] = [];
  const bindings: Binding[] = [];
  for (const o of objects) {
    const kind = o['kind'];
    const name = String(meta(o)['name'] ?? '');
    if (kind === 'ClusterRole' || kind === 'Role') {
      const rules = (Array.isArray(o['rules']) ? (o['rules'] as Obj[]) : []).map((r): PolicyRule => {
        const names = strings(r['resourceNames']);
        return {
          apiGroups: strings(r['apiGroups']),
          resources: strings(r['resources']),
          verbs: strings(r['verbs']),
          ...(names.length > 0 ? { resourceNames: names } : {}),
        };
      });
      roles.push({ kind, name, ...optNs(o), rules, origin, rendered });
    }
    if (kind === 'ClusterRoleBinding' || kind === 'RoleBinding') {
      const ref = (o['roleRef'] ?? {}) as Obj;
      const subjects = (Array.isArray(o['subjects']) ? (o['subjects'] as Obj[]) : []).map((s): Subject => ({
        kind: s['kind'] === 'ServiceAccount' ? 'ServiceAccount' : s['kind'] === 'Group' ? 'Group' : 'User',
        name: String(s['name'] ?? ''),
        ...(typeof s['namespace'] === 'string' ? { namespace: s['namespace'] } : {}),
      }));
      bindings.push({
        kind,
        name,
        ...optNs(o),
        roleRef: { kind: ref['kind'] === 'Role' ? 'Role' : 'ClusterRole', name: String(ref['name'] ?? '') },
        subjects,
        origin,
        rendered,
      });
    }
  }
  return { roles, bindings };
}

export function mergePolicies(...policies: readonly Policy[]): Policy {
  return { roles: policies.flatMap((p) => p.roles), bindings: policies.flatMap((p) => p.bindings) };
}

function subjectMatches(s: Subject, who: UserInfo, bindingNs: string | undefined): boolean {
  if (s.kind === 'User') return s.name === who.user;
  if (s.kind === 'Group') return who.groups.includes(s.name);
  return who.user === `system:serviceaccount:${s.namespace ?? bindingNs ?? ''}:${s.name}`;
}

function resourceMatches(ruleResource: string, resource: string): boolean {
  if (ruleResource === '*' || ruleResource === resource) return true;
  const [base, sub] = resource.split('/');
  // `pods/*` covers every subresource of pods, `*/status` the status of every resource.
  return sub !== undefined && (ruleResource === `${base}/*` || ruleResource === `*/${sub}`);
}

export function ruleMatches(rule: PolicyRule, r: ApiRequest): boolean {
  if (!rule.verbs.includes('*') && !rule.verbs.includes(r.verb)) return false;
  if (!rule.apiGroups.includes('*') && !rule.apiGroups.includes(r.group)) return false;
  if (!rule.resources.some((res) => resourceMatches(res, r.resource))) return false;
  if (rule.resourceNames === undefined || rule.resourceNames.length === 0) return true;
  return r.name !== undefined && rule.resourceNames.includes(r.name);
}

/** A role the credential holds, and where (cluster-wide, or in one namespace through a RoleBinding). */
export interface Grant {
  readonly role: Role;
  readonly binding: Binding;
  /** Namespace the grant is limited to; undefined: cluster-wide. */
  readonly namespace?: string;
}

export function grantsOf(policy: Policy, who: UserInfo): Grant[] {
  const out: Grant[] = [];
  for (const b of policy.bindings) {
    if (!b.subjects.some((s) => subjectMatches(s, who, b.namespace))) continue;
    const role = policy.roles.find(
      (r) =>
        r.kind === b.roleRef.kind &&
        r.name === b.roleRef.name &&
        (r.kind === 'ClusterRole' || r.namespace === b.namespace),
    );
    if (role === undefined) continue;
    out.push({
      role,
      binding: b,
      ...(b.kind === 'RoleBinding' && b.namespace !== undefined ? { namespace: b.namespace } : {}),
    });
  }
  return out;
}

/** The first grant that allows the request, or undefined (RBAC denies by default). */
export function rbacAllows(policy: Policy, who: UserInfo, r: ApiRequest): Grant | undefined {
  return grantsOf(policy, who).find(
    (g) =>
      (g.namespace === undefined || g.namespace === r.namespace) && g.role.rules.some((rule) => ruleMatches(rule, r)),
  );
}

export function describeGrant(g: Grant): string {
  const where = g.namespace === undefined ? '' : ` in ${g.namespace}`;
  return `${g.role.kind}/${g.role.name} via ${g.binding.kind}/${g.binding.name}${where}`;
}
