// auditPlan: every component's needed requests, decided by the Node
// authorizer and RBAC over the plan's own manifests plus Kubernetes' and
// kubeadm's defaults; then, per ServiceAccount, every permission it holds
// must be one some component using it needs, and none may let a credential
// outgrow itself (mint its own tokens, read secrets it does not need, write
// RBAC, impersonate). Pure.
import { parseAllDocuments } from 'yaml';
import { calicoWindows, components, type AuditInput } from './components.js';
import { nodeAuthorizer } from './node-authorizer.js';
import {
  describeGrant,
  grantsOf,
  mergePolicies,
  policyFrom,
  rbacAllows,
  ruleMatches,
  type Grant,
  type Policy,
  type UserInfo,
} from './rbac.js';
import type {
  ApiRequest,
  AuditResult,
  Component,
  Credential,
  Decision,
  Finding,
  NeededRequest,
  PolicyRule,
} from './types.js';
import { upstreamPolicy } from './upstream.js';
import { calicoPolicy } from './calico.js';

export interface AuditOptions {
  /** Extra RBAC objects kubemix installs outside the plan (the guard webhook), with components using them. */
  readonly extra?: {
    readonly objects: readonly Record<string, unknown>[];
    readonly origin: string;
    readonly components: readonly Component[];
  };
}

export function credentialLabel(c: Credential): string {
  switch (c.kind) {
    case 'node':
      return `node ${c.node.toLowerCase()} (kubelet.conf)`;
    case 'serviceaccount':
      return `ServiceAccount ${c.namespace}/${c.name} (${c.how.startsWith('TokenRequest') ? 'minted token' : c.how})`;
    case 'admin':
      return `admin.conf (cluster-admin)`;
    case 'unknown':
      return `unknown (${c.file})`;
  }
}

export function userInfo(c: Credential): UserInfo {
  switch (c.kind) {
    case 'node':
      return { user: `system:node:${c.node.toLowerCase()}`, groups: ['system:nodes', 'system:authenticated'] };
    case 'serviceaccount':
      return {
        user: `system:serviceaccount:${c.namespace}:${c.name}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${c.namespace}`, 'system:authenticated'],
      };
    case 'admin':
      return { user: 'kubernetes-admin', groups: ['kubeadm:cluster-admins', 'system:authenticated'] };
    case 'unknown':
      return { user: 'system:anonymous', groups: ['system:unauthenticated'] };
  }
}

export function renderedPolicy(input: AuditInput): Policy {
  const objects = input.files
    .filter((f) => f.node === 'cluster' && f.remotePath.startsWith('manifests/'))
    .map((f) =>
      policyFrom(
        parseAllDocuments(f.content).map((d) => (d.toJS() ?? {}) as Record<string, unknown>),
        `kubemix ${f.remotePath}`,
        true,
      ),
    );
  return mergePolicies(...objects);
}

function decide(policy: Policy, c: Component, r: NeededRequest): Decision {
  if (c.credential.kind === 'unknown')
    return { request: r, allowed: false, by: `no traceable credential (${c.credential.file})` };
  const who = userInfo(c.credential);
  const node = c.credential.kind === 'node' ? nodeAuthorizer(c.credential.node.toLowerCase(), r) : undefined;
  if (node?.allowed === true) return { request: r, allowed: true, by: node.why };
  const grant = rbacAllows(policy, who, r);
  if (grant !== undefined) return { request: r, allowed: true, by: `RBAC ${describeGrant(grant)}` };
  return { request: r, allowed: false, by: node?.why ?? 'RBAC: no role allows it' };
}

export function auditPlan(input: AuditInput, options: AuditOptions = {}): AuditResult {
  const extra = options.extra;
  const policy = mergePolicies(
    renderedPolicy(input),
    upstreamPolicy(),
    ...(calicoWindows(input) ? [calicoPolicy()] : []),
    ...(extra === undefined ? [] : [policyFrom(extra.objects, extra.origin, true)]),
  );
  const all = [...components(input), ...(extra?.components ?? [])];
  const evaluated = all.map((component) => ({
    component,
    decisions: component.requests.map((r) => decide(policy, component, r)),
  }));
  const findings: Finding[] = [];
  for (const { component, decisions } of evaluated) {
    for (const d of decisions.filter((x) => !x.allowed)) {
      findings.push({
        severity: 'error',
        credential: credentialLabel(component.credential),
        message: `${component.name} on ${component.runsOn}: ${requestText(d.request)} is denied — ${d.by}`,
      });
    }
  }
  findings.push(...breadth(policy, all), ...unused(policy, all));
  return { components: evaluated, findings, ok: !findings.some((f) => f.severity === 'error') };
}

export function requestText(r: ApiRequest): string {
  const res = r.group === '' ? r.resource : `${r.resource}.${r.group}`;
  const where =
    r.scope === 'own-node'
      ? ' (own Node)'
      : r.scope === 'node-pods'
        ? ' (its pods)'
        : r.scope === 'pod-referenced'
          ? " (its pods')"
          : r.name !== undefined
            ? ` ${r.name}`
            : r.namespace === undefined && ['get', 'list', 'watch'].includes(r.verb)
              ? ' (all)'
              : '';
  return `${r.verb} ${res}${r.namespace !== undefined && r.scope === undefined ? ` in ${r.namespace}` : ''}${where}`;
}

/** Grants that would let a credential outgrow what it is: errors wherever they come from, unless needed. */
function escalation(rule: PolicyRule, verb: string, resource: string): string | undefined {
  if (rule.verbs.includes('*') || rule.resources.includes('*') || rule.apiGroups.includes('*'))
    return 'a wildcard rule';
  if (resource === 'serviceaccounts/token' && verb === 'create') return 'may mint ServiceAccount tokens';
  if (resource === 'secrets' && ['get', 'list', 'watch'].includes(verb)) return 'may read secrets';
  if (
    ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'].includes(resource) &&
    !['get', 'list', 'watch'].includes(verb)
  )
    return 'may change RBAC';
  if (['impersonate', 'bind', 'escalate'].includes(verb)) return `may ${verb}`;
  if (['pods/exec', 'pods/attach', 'nodes/proxy'].includes(resource)) return `may use ${resource}`;
  return undefined;
}

function breadth(policy: Policy, all: readonly Component[]): Finding[] {
  const out: Finding[] = [];
  const byCredential = new Map<string, Component[]>();
  for (const c of all)
    byCredential.set(credentialKey(c.credential), [...(byCredential.get(credentialKey(c.credential)) ?? []), c]);
  for (const users of byCredential.values()) {
    const cred = users[0]?.credential;
    if (cred === undefined || cred.kind === 'unknown') continue;
    const label =
      cred.kind === 'serviceaccount' ? `ServiceAccount ${cred.namespace}/${cred.name}` : credentialLabel(cred);
    if (cred.kind === 'admin') {
      out.push({
        severity: 'info',
        credential: label,
        message: `cluster-admin by design: ${[...new Set(users.map((u) => u.name))].join(', ')} run on a control-plane node, which holds the cluster CA key anyway`,
      });
      continue;
    }
    const needs = users.flatMap((u) => u.requests);
    const who = userInfo(cred);
    for (const g of grantsOf(policy, who)) out.push(...grantFindings(g, needs, cred, label, users));
  }
  return out;
}

function grantFindings(
  g: Grant,
  needs: readonly NeededRequest[],
  cred: Credential,
  label: string,
  users: readonly Component[],
): Finding[] {
  const out: Finding[] = [];
  for (const rule of g.role.rules) {
    for (const verb of rule.verbs) {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          const probe: PolicyRule = {
            apiGroups: [group],
            resources: [resource],
            verbs: [verb],
            ...(rule.resourceNames === undefined ? {} : { resourceNames: rule.resourceNames }),
          };
          const needed = needs.some(
            (n) => (g.namespace === undefined || n.namespace === g.namespace) && ruleMatches(probe, n),
          );
          const what = `${verb} ${resource}${group === '' ? '' : `.${group}`}${rule.resourceNames === undefined ? '' : ` [${rule.resourceNames.join(', ')}]`}`;
          const self =
            cred.kind === 'serviceaccount' &&
            resource === 'serviceaccounts/token' &&
            verb === 'create' &&
            (rule.resourceNames === undefined || rule.resourceNames.includes(cred.name)) &&
            (g.namespace === undefined || g.namespace === cred.namespace);
          if (self) {
            out.push({
              severity: 'error',
              credential: label,
              message: `${what} (${describeGrant(g)}): the credential can mint tokens for itself, so a stolen copy renews itself for ever; used by ${[...new Set(users.map((u) => `${u.name} (${u.os})`))].join(', ')}`,
            });
            continue;
          }
          if (needed) continue;
          const esc = escalation(rule, verb, resource);
          if (esc !== undefined)
            out.push({
              severity: 'error',
              credential: label,
              message: `${what} (${describeGrant(g)}) ${esc} and nothing needs it`,
            });
          else if (g.role.rendered || g.binding.rendered)
            out.push({
              severity: 'error',
              credential: label,
              message: `${what} (${describeGrant(g)}) is broader than any component using it needs`,
            });
          else
            out.push({
              severity: 'info',
              credential: label,
              message: `${what} (${describeGrant(g)}): an upstream default, more than kubemix's components need (left as upstream ships it)`,
            });
        }
      }
    }
  }
  return out;
}

function credentialKey(c: Credential): string {
  switch (c.kind) {
    case 'node':
      return `node:${c.node.toLowerCase()}`;
    case 'serviceaccount':
      return `sa:${c.namespace}/${c.name}`;
    case 'admin':
      return 'admin';
    case 'unknown':
      return `unknown:${c.file}`;
  }
}

/** Rendered bindings to a ServiceAccount no component runs as: permissions nobody needs. */
function unused(policy: Policy, all: readonly Component[]): Finding[] {
  const used = new Set(all.map((c) => credentialKey(c.credential)));
  return policy.bindings
    .filter((b) => b.rendered)
    .flatMap((b) =>
      b.subjects
        .filter((s) => s.kind === 'ServiceAccount')
        .flatMap((s): Finding[] => {
          const key = `sa:${s.namespace ?? b.namespace ?? ''}/${s.name}`;
          if (used.has(key)) return [];
          return [
            {
              severity: 'error',
              credential: `ServiceAccount ${s.namespace ?? b.namespace ?? ''}/${s.name}`,
              message: `${b.kind}/${b.name} (${b.origin}) grants ${b.roleRef.kind}/${b.roleRef.name} to a ServiceAccount no component runs as`,
            },
          ];
        }),
    );
}
