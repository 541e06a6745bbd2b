// The guard webhook (`kubemix guard install`, outside the plan): its
// ServiceAccount and RBAC as the installer renders them, and what its
// server asks the API for, for the audit.
import { GUARD_NAME, renderInstall } from '../guard/install.js';
import type { AuditOptions } from './audit.js';
import { guardRequests } from './upstream.js';

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** The webhook's RBAC objects and component for `namespace`, with or without pull-secret reading. */
export function guardAudit(namespace: string, pullSecrets: boolean): NonNullable<AuditOptions['extra']> {
  // Only the RBAC objects are kept: certificate, image and spec do not bear on authorization.
  const objects = renderInstall({
    namespace,
    pullSecrets,
    image: 'audit',
    caBundle: '',
    tls: { cert: '', key: '' },
    specText: undefined,
    specArg: 'audit',
    failurePolicy: 'Fail',
    timeoutSeconds: 5,
    insecureRegistries: [],
  }).filter((o) => RBAC_KINDS.has(String(o['kind'])));
  const component = {
    name: `guard webhook${pullSecrets ? '' : ' (--no-pull-secrets)'}`,
    os: 'linux' as const,
    runsOn: `Linux nodes (Deployment ${namespace}/${GUARD_NAME})`,
    credential: { kind: 'serviceaccount' as const, namespace, name: GUARD_NAME, how: 'projected (pod)' },
    credentialSource: 'kubemix guard install: Deployment serviceAccountName',
    requests: pullSecrets ? guardRequests() : [],
  };
  return { objects, origin: 'kubemix guard install', components: [component] };
}
