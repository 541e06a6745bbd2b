// ServiceAccount tokens of the Windows node services: a native Windows service
// cannot mount a projected token (only the kubelet mounts those, into pods:
// Kubernetes docs, "Service account token volume projection"), so the executor
// mints one with the TokenRequest API on the first controller (admin.conf,
// where the right to mint already lives) and installs it on each Windows
// node. No ServiceAccount may request tokens for itself: a credential that
// can renew itself outlives any theft of it. Renewal is therefore the
// executor's: every `kubemix up` re-mints a copy older than `renewAfterHours`
// and the node takes it when it lives longer than the one it holds.
import { SECRET_NAMES } from '../../model/secret-names.js';

export interface WindowsToken {
  /** Secret-store name the minted token is captured under. */
  readonly secret: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  /** What runs with it, and what the ServiceAccount is bound to. */
  readonly purpose: string;
}

/** Lifetime and renewal of every minted Windows token. */
export const WINDOWS_TOKEN_LIFETIME = {
  /**
   * 90 days: the longest a node may go without a `kubemix up` before its
   * services lose the API, and also the longest a leaked token stays usable
   * (tokens not bound to an object cannot be revoked one by one; recreating
   * the ServiceAccount revokes them all).
   */
  lifetimeHours: 2160,
  /** A copy older than 30 days is re-minted by the next `kubemix up`: a monthly run keeps 60 days of slack. */
  renewAfterHours: 720,
} as const;

/** kube-proxy: kubeadm's kube-system/kube-proxy ServiceAccount already holds system:node-proxier. */
export const KUBE_PROXY_TOKEN: WindowsToken = {
  secret: SECRET_NAMES.kubeProxyWindowsToken,
  namespace: 'kube-system',
  serviceAccount: 'kube-proxy',
  purpose: 'the Windows kube-proxy (system:node-proxier)',
};

/** flanneld as a Windows service: the flannel-windows ServiceAccount (nodes get/list/watch, nodes/status patch). */
export const FLANNEL_WINDOWS_TOKEN: WindowsToken = {
  secret: SECRET_NAMES.flannelWindowsToken,
  namespace: 'kube-flannel',
  serviceAccount: 'flannel-windows',
  purpose: 'the Windows flanneld service (ClusterRole flannel-windows)',
};
