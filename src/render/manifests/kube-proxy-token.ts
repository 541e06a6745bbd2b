// Credentials of the native Windows kube-proxy. kubeadm's
// kube-system/kube-proxy ServiceAccount already holds system:node-proxier; a
// Windows service cannot mount a projected token, so the first controller
// mints one with the TokenRequest API and each Windows node renews its own
// token before it expires, through the one extra permission granted here.

/** Lifetime and renewal of the Windows kube-proxy token. */
export const KUBE_PROXY_TOKEN = {
  namespace: 'kube-system',
  serviceAccount: 'kube-proxy',
  /**
   * 30 days. Each Windows node renews daily, so in normal operation a token
   * is at most a day old; 30 days is the slack for a node that is off or cut
   * off from the API, and also the longest a leaked token stays usable
   * (tokens not bound to an object cannot be revoked one by one).
   */
  lifetimeHours: 720,
  /** The controller re-mints its copy (for `kubemix up` re-runs) past half the lifetime. */
  renewAfterHours: 360,
  /** Name of the Role/RoleBinding that lets the token renew itself. */
  renewalRbac: 'kubemix:kube-proxy-windows-token',
} as const;

type Obj = Record<string, unknown>;

/**
 * Lets the kube-proxy ServiceAccount request tokens for itself only
 * (resourceNames), so a Windows node can renew with the token it holds.
 */
export function kubeProxyTokenRbac(): Obj[] {
  const { namespace, serviceAccount, renewalRbac } = KUBE_PROXY_TOKEN;
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: renewalRbac, namespace },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: [serviceAccount], verbs: ['create'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: renewalRbac, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: renewalRbac },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
    },
  ];
}

/** The TokenRequest path of the ServiceAccount, relative to the API server. */
export function tokenRequestPath(): string {
  return `/api/v1/namespaces/${KUBE_PROXY_TOKEN.namespace}/serviceaccounts/${KUBE_PROXY_TOKEN.serviceAccount}/token`;
}
