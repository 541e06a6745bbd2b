// Secrets the cluster bootstrap uses. Values live in kubemix's state and are
// filled in by the executor at run time; plans and artifacts only name them.
export const KUBEADM_SECRET = {
  /** Bootstrap token `[a-z0-9]{6}.[a-z0-9]{16}`. */
  token: 'kubeadm-token',
  /** 32-byte hex key that encrypts the control-plane certificates kubeadm uploads. */
  certificateKey: 'kubeadm-certificate-key',
  /** `sha256:<hex>` of the cluster CA's public key, for join discovery. */
  caCertHash: 'cluster-ca-cert-hash',
} as const;

export const ref = (name: string): string => `{{secret:${name}}}`;
