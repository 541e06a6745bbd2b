// HostProcess pods run directly on the Windows host (CNI, kube-proxy,
// monitoring agents). Kubernetes admits them only in one shape (Kubernetes
// docs, "Create a Windows HostProcess Pod"): hostNetwork, every container
// HostProcess, a host account, runAsNonRoot not true.
import { isHostProcess, podHostProcess, runAsUserName } from '../pod.js';
import { asMap, stringEntries } from '../values.js';
import type { ObjectHit, RuleHit, SetRule, TemplateContext, TemplateRule } from './types.js';

/** The built-in accounts a HostProcess container may run as (local user groups also work since 1.27). */
const HOST_PROCESS_USERS = [
  'nt authority\\system',
  'nt authority\\local service',
  'nt authority\\localservice',
  'nt authority\\networkservice',
  'nt authority\\network service',
];
const POD_SECURITY_LABEL = 'pod-security.kubernetes.io/enforce';

function hostProcessRule(
  meta: Omit<TemplateRule, 'scope' | 'check' | 'needsCluster' | 'fixable'>,
  check: (ctx: TemplateContext) => RuleHit[],
): TemplateRule {
  return {
    ...meta,
    scope: 'template',
    needsCluster: false,
    fixable: false,
    check: (ctx) => (ctx.hostProcess ? check(ctx) : []),
  };
}

export const hostProcessHostNetwork = hostProcessRule(
  {
    id: 'hostprocess/host-network',
    severity: 'error',
    why: 'HostProcess pods must set hostNetwork: true; the API server rejects them otherwise.',
    hint: 'set spec.hostNetwork: true',
  },
  (ctx) =>
    ctx.spec['hostNetwork'] === true
      ? []
      : [{ path: ['hostNetwork'], message: 'HostProcess pod without hostNetwork: true' }],
);

export const hostProcessAllContainers = hostProcessRule(
  {
    id: 'hostprocess/all-containers',
    severity: 'error',
    why: 'A pod cannot mix HostProcess and ordinary Windows containers; the API server rejects it.',
    hint: 'set windowsOptions.hostProcess: true on the pod, or on every container',
  },
  (ctx) =>
    ctx.containers
      .filter((c) => !isHostProcess(ctx.spec, c))
      .map((c) => ({
        path: [...c.path, 'securityContext', 'windowsOptions', 'hostProcess'],
        container: c.name,
        message: `container ${c.name} is not a HostProcess container but others in the pod are`,
      })),
);

export const hostProcessUserName = hostProcessRule(
  {
    id: 'hostprocess/user-name',
    severity: 'warning',
    why: 'HostProcess containers run as NT AUTHORITY\\SYSTEM, LocalService or NetworkService, or a local user group on the node; other names fail at container start.',
    hint: 'set windowsOptions.runAsUserName to "NT AUTHORITY\\SYSTEM", "NT AUTHORITY\\Local service" or "NT AUTHORITY\\NetworkService"',
  },
  (ctx) =>
    ctx.containers.flatMap((c) => {
      const user = runAsUserName(ctx.spec, c);
      if (user === undefined || HOST_PROCESS_USERS.includes(user.value.toLowerCase())) return [];
      return [
        {
          path: user.path,
          container: c.name,
          message: `runAsUserName "${user.value}" is not a built-in HostProcess account; it must be a local user group on every Windows node`,
        },
      ];
    }),
);

export const hostProcessRunAsNonRoot = hostProcessRule(
  {
    id: 'hostprocess/run-as-non-root',
    severity: 'error',
    why: 'runAsNonRoot: true contradicts a HostProcess container, which runs as a host account; the pod is rejected.',
    hint: 'remove runAsNonRoot',
  },
  (ctx) => {
    const hits: RuleHit[] = [];
    if (asMap(ctx.spec['securityContext'])?.['runAsNonRoot'] === true) {
      hits.push({ path: ['securityContext', 'runAsNonRoot'], message: 'runAsNonRoot: true on a HostProcess pod' });
    }
    for (const c of ctx.containers) {
      if (asMap(c.value['securityContext'])?.['runAsNonRoot'] === true) {
        hits.push({
          path: [...c.path, 'securityContext', 'runAsNonRoot'],
          container: c.name,
          message: 'runAsNonRoot: true on a HostProcess container',
        });
      }
    }
    return hits;
  },
);

export const hostProcessOnLinux = hostProcessRule(
  {
    id: 'hostprocess/linux-placement',
    severity: 'error',
    why: 'HostProcess is a Windows feature; a HostProcess pod placed on Linux nodes is rejected by the kubelet.',
    hint: 'place the pod on Windows (spec.os.name: windows)',
  },
  (ctx) => {
    if (ctx.placement.os !== 'linux') return [];
    const path =
      podHostProcess(ctx.spec) === true
        ? ['securityContext', 'windowsOptions', 'hostProcess']
        : (ctx.placement.signals[0]?.path ?? []);
    return [{ path, message: 'HostProcess pod placed on linux' }];
  },
);

export const hostProcessPodSecurity: SetRule = {
  scope: 'set',
  id: 'hostprocess/pod-security',
  severity: 'error',
  why: 'HostProcess pods are privileged: a namespace enforcing the baseline or restricted Pod Security level rejects them.',
  hint: `label the namespace ${POD_SECURITY_LABEL}=privileged (and keep such namespaces few)`,
  needsCluster: false,
  fixable: false,
  check(ctx) {
    const levels = new Map<string, string>();
    for (const o of ctx.objects) {
      if (o.kind !== 'Namespace') continue;
      const level = stringEntries(asMap(o.value['metadata'])?.['labels'])[POD_SECURITY_LABEL];
      if (level !== undefined) levels.set(o.name, level);
    }
    const hits: ObjectHit[] = [];
    for (const t of ctx.templates) {
      const ns = t.template.object.namespace;
      const level = ns === undefined ? undefined : levels.get(ns);
      if (!t.hostProcess || level === undefined || level === 'privileged') continue;
      hits.push({
        object: t.template.object,
        path: [...t.template.object.path, 'metadata', 'namespace'],
        message: `HostProcess pod in namespace ${ns ?? ''}, which enforces Pod Security level ${level}`,
      });
    }
    return hits;
  },
};

export const HOSTPROCESS_RULES: readonly TemplateRule[] = [
  hostProcessHostNetwork,
  hostProcessAllContainers,
  hostProcessUserName,
  hostProcessRunAsNonRoot,
  hostProcessOnLinux,
];
