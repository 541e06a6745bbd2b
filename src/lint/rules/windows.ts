// Fields Windows pods cannot use (Kubernetes docs, "Pod OS" field validation:
// the fields listed for spec.os.name windows). With spec.os.name: windows
// the API server rejects most of them; without it they are silently ignored,
// which is worse: the pod runs without the protection the author asked for.
import { anyHostProcess } from '../pod.js';
import { asArray, asMap, has } from '../values.js';
import { osSourceOf, type RuleHit, type TemplateContext, type TemplateRule } from './types.js';

const POD_HOST_NAMESPACES = ['hostPID', 'hostIPC', 'shareProcessNamespace'] as const;
const POD_SECURITY_FIELDS = [
  'seLinuxOptions',
  'seccompProfile',
  'fsGroup',
  'fsGroupChangePolicy',
  'sysctls',
  'runAsUser',
  'runAsGroup',
  'supplementalGroups',
] as const;
const CONTAINER_SECURITY_FIELDS = [
  'seLinuxOptions',
  'seccompProfile',
  'capabilities',
  'readOnlyRootFilesystem',
  'privileged',
  'allowPrivilegeEscalation',
  'procMount',
  'runAsUser',
  'runAsGroup',
] as const;

function windowsRule(id: string, why: string, hint: string, check: (ctx: TemplateContext) => RuleHit[]): TemplateRule {
  return {
    scope: 'template',
    id,
    severity: 'error',
    why,
    hint,
    needsCluster: false,
    fixable: false,
    check: (ctx) => (ctx.os === 'windows' ? check(ctx).map((hit) => ({ ...osSourceOf(ctx), ...hit })) : []),
  };
}

export const hostNamespaces = windowsRule(
  'windows/host-namespaces',
  'Windows has no shared PID or IPC namespaces: hostPID, hostIPC and shareProcessNamespace are rejected on Windows pods.',
  'remove the field from the Windows pod',
  (ctx) =>
    POD_HOST_NAMESPACES.filter((f) => ctx.spec[f] === true).map((f) => ({
      path: [f],
      message: `${f} is not supported on Windows`,
    })),
);

export const podSecurityContext = windowsRule(
  'windows/pod-security-context',
  'Linux identity and kernel settings (SELinux, seccomp, fsGroup, sysctls, UIDs/GIDs) do not exist on Windows and are rejected or ignored.',
  'remove the field; on Windows use securityContext.windowsOptions (runAsUserName, gmsaCredentialSpec)',
  (ctx) => {
    const sc = asMap(ctx.spec['securityContext']);
    return POD_SECURITY_FIELDS.filter((f) => has(sc, f)).map((f) => ({
      path: ['securityContext', f],
      message: `securityContext.${f} is Linux-only and not supported on Windows pods`,
    }));
  },
);

export const containerSecurityContext = windowsRule(
  'windows/container-security-context',
  'Container privileges, capabilities, read-only root and UIDs are Linux concepts; Windows rejects or ignores them.',
  'remove the field; privileged work on Windows needs a HostProcess container',
  (ctx) =>
    ctx.containers.flatMap((c) => {
      const sc = asMap(c.value['securityContext']);
      return CONTAINER_SECURITY_FIELDS.filter((f) => has(sc, f)).map((f) => ({
        path: [...c.path, 'securityContext', f],
        container: c.name,
        message: `securityContext.${f} is Linux-only and not supported on Windows containers`,
      }));
    }),
);

export const hostNetwork = windowsRule(
  'windows/host-network',
  'Windows pods get the host network only as HostProcess pods.',
  'drop hostNetwork, or make every container a HostProcess container',
  (ctx) =>
    ctx.spec['hostNetwork'] === true && !anyHostProcess(ctx.spec, ctx.containers)
      ? [{ path: ['hostNetwork'], message: 'hostNetwork on a Windows pod that is not a HostProcess pod' }]
      : [],
);

export const hugepages = windowsRule(
  'windows/hugepages',
  'Windows nodes offer no huge pages: a pod requesting them never schedules.',
  'remove the hugepages-* resources and volumes',
  (ctx) => {
    const hits: RuleHit[] = [];
    for (const c of ctx.containers) {
      const resources = asMap(c.value['resources']);
      for (const kind of ['requests', 'limits']) {
        for (const key of Object.keys(asMap(resources?.[kind]) ?? {})
          .filter((k) => k.startsWith('hugepages-'))
          .sort()) {
          hits.push({
            path: [...c.path, 'resources', kind, key],
            container: c.name,
            message: `${kind}.${key}: Windows has no huge pages`,
          });
        }
      }
    }
    asArray(ctx.spec['volumes']).forEach((v, i) => {
      const medium = asMap(asMap(v)?.['emptyDir'])?.['medium'];
      if (typeof medium === 'string' && medium.startsWith('HugePages')) {
        hits.push({
          path: ['volumes', i, 'emptyDir', 'medium'],
          message: `emptyDir medium ${medium}: Windows has no huge pages`,
        });
      }
    });
    return hits;
  },
);

export const memoryEmptyDir = windowsRule(
  'windows/memory-emptydir',
  'Windows has no tmpfs: emptyDir with medium Memory is not supported.',
  'drop `medium: Memory` (a disk-backed emptyDir works)',
  (ctx) =>
    asArray(ctx.spec['volumes']).flatMap((v, i) =>
      asMap(asMap(v)?.['emptyDir'])?.['medium'] === 'Memory'
        ? [
            {
              path: ['volumes', i, 'emptyDir', 'medium'],
              message: 'emptyDir medium Memory is not supported on Windows',
            },
          ]
        : [],
    ),
);

export const mountPropagation = windowsRule(
  'windows/mount-propagation',
  'Windows has no mount propagation.',
  'remove mountPropagation (or set it to None)',
  (ctx) =>
    ctx.containers.flatMap((c) =>
      asArray(c.value['volumeMounts']).flatMap((m, i) => {
        const mode = asMap(m)?.['mountPropagation'];
        return mode !== undefined && mode !== null && mode !== 'None'
          ? [
              {
                path: [...c.path, 'volumeMounts', i, 'mountPropagation'],
                container: c.name,
                message: `mountPropagation ${String(mode)} is not supported on Windows`,
              },
            ]
          : [];
      }),
    ),
);

export const volumeDevices = windowsRule(
  'windows/volume-devices',
  'Raw block volumes (volumeDevices) cannot be attached to Windows containers.',
  'use a filesystem volume (volumeMounts) instead',
  (ctx) =>
    ctx.containers.flatMap((c) =>
      asArray(c.value['volumeDevices']).length > 0
        ? [
            {
              path: [...c.path, 'volumeDevices'],
              container: c.name,
              message: 'volumeDevices (raw block) are not supported on Windows',
            },
          ]
        : [],
    ),
);

export const WINDOWS_RULES: readonly TemplateRule[] = [
  hostNamespaces,
  podSecurityContext,
  containerSecurityContext,
  hostNetwork,
  hugepages,
  memoryEmptyDir,
  mountPropagation,
  volumeDevices,
];
