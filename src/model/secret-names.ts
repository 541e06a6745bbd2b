// The secrets plans refer to as `{{secret:NAME}}`, named once. The executor
// keeps their values in the state directory: tokens, keys and passwords it
// generates; the cluster CA it creates as a set (certificate, key and the
// `sha256:<hex>` hash kubeadm join discovery pins); the rest tasks capture.
import { CLUSTER_SSH_PUBLIC_KEY, WINDOWS_ADMIN_PASSWORD } from '../drivers/secret-names.js';

/** The placeholder the executor fills with a secret's value (`{{secret:NAME}}`) just before use. */
export function secretRef(name: string): string {
  return `{{secret:${name}}}`;
}

export const SECRET_NAMES = {
  /** kubeadm bootstrap token `[a-z0-9]{6}.[a-z0-9]{16}`. */
  kubeadmToken: 'kubeadm-token',
  /** 32-byte hex key that encrypts the control-plane certificates kubeadm uploads. */
  kubeadmCertificateKey: 'kubeadm-certificate-key',
  /** The cluster CA (PEM); kubeadm adopts it, the registry's TLS chains to it. */
  clusterCaCert: 'cluster-ca-cert',
  clusterCaKey: 'cluster-ca-key',
  /** `sha256:<hex>` of the CA's public key, for `kubeadm join` discovery. */
  clusterCaCertHash: 'cluster-ca-cert-hash',
  registryPassword: 'registry-password',
  /** base64 of `kubemix:<registry-password>`: containerd's Authorization header for the services registry (derived). */
  registryBasicAuth: 'registry-basic-auth',
  /** kubeadm's /etc/kubernetes/admin.conf from the first controller (`kubemix kubeconfig`). */
  adminKubeconfig: 'admin-kubeconfig',
  /** Token earlier kubemix versions minted for the Windows kube-proxy service; now only removed (windows-legacy-tokens). */
  kubeProxyWindowsToken: 'kube-proxy-windows-token',
  /** Token earlier kubemix versions minted for the Windows flanneld service; now only removed (windows-legacy-tokens). */
  flannelWindowsToken: 'flannel-windows-token',
  /** Local Administrator of a Windows VM kubemix installs (Autounattend.xml); generated. */
  windowsAdminPassword: WINDOWS_ADMIN_PASSWORD,
  /** The public half of kubemix's login key to the VMs it creates (drivers/secret-names.ts). */
  clusterSshPublicKey: CLUSTER_SSH_PUBLIC_KEY,
} as const;

export { sshHostKeyBase64Secret, sshHostKeySecret, sshHostPublicKeySecret } from '../drivers/secret-names.js';

/**
 * A serving certificate and its key, issued by the executor on the deployer
 * from the cluster CA, so the CA's key never leaves the deployer for the
 * host that serves it. The names carry the DNS name and IP address the
 * certificate is for: a new name or address means a new certificate.
 */
export function servingTlsSecrets(dnsName: string, ip: string): { readonly cert: string; readonly key: string } {
  const base = `${dnsName.toLowerCase()}_${ip}`;
  return { cert: `serving-cert_${base}`, key: `serving-key_${base}` };
}

/** The DNS name and IP address a serving-certificate secret name is for; undefined for other names. */
export function parseServingTlsSecret(
  name: string,
): { readonly part: 'cert' | 'key'; readonly dnsName: string; readonly ip: string } | undefined {
  const m = /^serving-(cert|key)_([a-z0-9.-]+)_([0-9.]+|[0-9a-f:]+)$/.exec(name);
  if (m === null) return undefined;
  return { part: m[1] === 'cert' ? 'cert' : 'key', dnsName: m[2] ?? '', ip: m[3] ?? '' };
}

/** The secrets that make up the cluster CA: created together, never one alone. */
export const CLUSTER_CA_SECRETS = [
  SECRET_NAMES.clusterCaCert,
  SECRET_NAMES.clusterCaKey,
  SECRET_NAMES.clusterCaCertHash,
] as const;
