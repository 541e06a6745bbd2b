// Fields a pod declared Linux cannot carry. With spec.os.name: linux the API
// server validates the pod as a Linux pod and forbids
// securityContext.windowsOptions, on the pod and on every container
// (Kubernetes API validation of the Pod OS field; docs "Pods": "Pod OS").
import { asMap } from '../values.js';
import type { RuleHit, TemplateRule } from './types.js';

export const linuxWindowsOptions: TemplateRule = {
  scope: 'template',
  id: 'linux/windows-options',
  severity: 'error',
  why: 'The API server rejects securityContext.windowsOptions on a pod with spec.os.name: linux.',
  hint: 'remove windowsOptions, or set spec.os.name: windows if this is a Windows pod',
  needsCluster: false,
  fixable: false,
  check(ctx) {
    if (ctx.placement.osName !== 'linux') return [];
    const hits: RuleHit[] = [];
    if (asMap(ctx.spec['securityContext'])?.['windowsOptions'] != null) {
      hits.push({
        path: ['securityContext', 'windowsOptions'],
        message: 'securityContext.windowsOptions is forbidden on a pod with spec.os.name: linux',
      });
    }
    for (const c of ctx.containers) {
      if (asMap(c.value['securityContext'])?.['windowsOptions'] == null) continue;
      hits.push({
        path: [...c.path, 'securityContext', 'windowsOptions'],
        container: c.name,
        message: 'securityContext.windowsOptions is forbidden on a container of a pod with spec.os.name: linux',
      });
    }
    return hits;
  },
};

export const LINUX_RULES: readonly TemplateRule[] = [linuxWindowsOptions];
