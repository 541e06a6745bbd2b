// Services in front of Windows pods meet Windows networking limits (Kubernetes
// docs, "Windows containers in Kubernetes" → networking): at most 64 backends, no IPv6 between overlay pods, and
// `externalTrafficPolicy: Local` only with DSR in kube-proxy.
import { namespaceKey, type ManifestObject } from '../objects.js';
import { asArray, asMap, asString, stringEntries } from '../values.js';
import type { ObjectHit, SetContext, SetRule, TemplateContext } from './types.js';

export const WINDOWS_SERVICE_BACKEND_LIMIT = 64;

interface ServiceView {
  readonly object: ManifestObject;
  readonly spec: Readonly<Record<string, unknown>>;
  /** Windows pod templates the selector matches. */
  readonly windows: readonly TemplateContext[];
}

/** Templates by namespace and `label=value`, so each Service looks at candidates only (10k templates stay linear). */
function indexTemplates(templates: readonly TemplateContext[]): Map<string, TemplateContext[]> {
  const index = new Map<string, TemplateContext[]>();
  for (const t of templates) {
    const ns = namespaceKey(t.template.object);
    for (const [k, v] of Object.entries(t.template.labels)) {
      const key = `${ns}\u0000${k}=${v}`;
      const list = index.get(key);
      if (list === undefined) index.set(key, [t]);
      else list.push(t);
    }
  }
  return index;
}

/** Each Service with a selector and the Windows templates behind it. */
function serviceViews(ctx: SetContext): readonly ServiceView[] {
  const index = indexTemplates(
    ctx.templates.filter((t) => t.os === 'windows' && t.template.object.kind !== 'PodTemplate'),
  );
  const out: ServiceView[] = [];
  for (const object of ctx.objects) {
    if (object.kind !== 'Service') continue;
    const spec = asMap(object.value['spec']) ?? {};
    const selector = Object.entries(stringEntries(spec['selector']));
    if (selector.length === 0) continue;
    const ns = namespaceKey(object);
    const candidates = selector.map(([k, v]) => index.get(`${ns}\u0000${k}=${v}`) ?? []);
    const smallest = candidates.reduce((a, b) => (b.length < a.length ? b : a));
    const windows = smallest.filter((t) => selector.every(([k, v]) => t.template.labels[k] === v));
    if (windows.length > 0) out.push({ object, spec, windows });
  }
  return out;
}

function names(templates: readonly TemplateContext[]): string {
  return templates.map((t) => `${t.template.object.kind}/${t.template.object.name}`).join(', ');
}

export const windowsBackendLimit: SetRule = {
  scope: 'set',
  id: 'service/windows-backend-limit',
  severity: 'error',
  why: `kube-proxy on Windows load-balances a Service to at most ${WINDOWS_SERVICE_BACKEND_LIMIT} backend pods; the rest get no traffic.`,
  hint: `keep the Windows replicas behind one Service at ${WINDOWS_SERVICE_BACKEND_LIMIT} or fewer, or split the Service`,
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const hits: ObjectHit[] = [];
    for (const view of serviceViews(ctx)) {
      const replicas = view.windows.reduce((sum, t) => sum + (t.template.replicas ?? 0), 0);
      if (replicas <= WINDOWS_SERVICE_BACKEND_LIMIT) continue;
      hits.push({
        object: view.object,
        path: [...view.object.path, 'spec', 'selector'],
        message: `selects ${replicas} Windows pods (${names(view.windows)}); Windows supports at most ${WINDOWS_SERVICE_BACKEND_LIMIT} backends per Service`,
      });
    }
    return hits;
  },
};

export const externalTrafficLocal: SetRule = {
  scope: 'set',
  id: 'service/external-traffic-local',
  severity: 'warning',
  why: 'On Windows nodes externalTrafficPolicy: Local needs kube-proxy with Direct Server Return (enableDSR); without it client IPs are not kept.',
  hint: 'enable DSR for kube-proxy on the Windows nodes, or use externalTrafficPolicy: Cluster',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    if (ctx.cluster?.windowsDsr === true) return [];
    return serviceViews(ctx)
      .filter((view) => view.spec['externalTrafficPolicy'] === 'Local')
      .map((view) => ({
        object: view.object,
        path: [...view.object.path, 'spec', 'externalTrafficPolicy'],
        message: `externalTrafficPolicy: Local in front of Windows pods (${names(view.windows)}) needs kube-proxy DSR`,
      }));
  },
};

export const windowsIpv6: SetRule = {
  scope: 'set',
  id: 'service/windows-ipv6',
  severity: 'error',
  why: 'Windows overlay networking carries no IPv6 between pods: an IPv6 or dual-stack Service in front of Windows pods does not work.',
  hint: 'use ipFamilies: [IPv4] (ipFamilyPolicy: SingleStack) for Services in front of Windows pods',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const hits: ObjectHit[] = [];
    for (const view of serviceViews(ctx)) {
      const families = asArray(view.spec['ipFamilies']).map(asString);
      const policy = view.spec['ipFamilyPolicy'];
      const field = families.includes('IPv6')
        ? 'ipFamilies'
        : policy === 'RequireDualStack'
          ? 'ipFamilyPolicy'
          : undefined;
      if (field === undefined) continue;
      hits.push({
        object: view.object,
        path: [...view.object.path, 'spec', field],
        message: `${field === 'ipFamilies' ? 'IPv6 in ipFamilies' : 'ipFamilyPolicy RequireDualStack'} for a Service in front of Windows pods (${names(view.windows)})`,
      });
    }
    return hits;
  },
};

export const SERVICE_RULES: readonly SetRule[] = [windowsBackendLimit, externalTrafficLocal, windowsIpv6];
