// Secrets the cluster bootstrap uses. Values live in kubemix's state and are
// filled in by the executor at run time; plans and artifacts only name them.
import { SECRET_NAMES } from '../../model/secret-names.js';

export const KUBEADM_SECRET = {
  token: SECRET_NAMES.kubeadmToken,
  certificateKey: SECRET_NAMES.kubeadmCertificateKey,
  caCertHash: SECRET_NAMES.clusterCaCertHash,
} as const;

export const ref = (name: string): string => `{{secret:${name}}}`;
