// The cluster CA: created once per cluster by the executor (never at plan
// time: a plan holds no key material). kubeadm adopts a CA it finds in
// /etc/kubernetes/pki, so the join discovery hash is known before `kubeadm
// init` runs, and the services registry's TLS chains to the same CA.
import { createHash, createPublicKey } from 'node:crypto';
import forge from 'node-forge';
import { newKeyAndCertificate } from '../util/x509.js';

export interface ClusterCa {
  readonly cert: string;
  readonly key: string;
  /** `sha256:<hex>` of the DER SubjectPublicKeyInfo, as `kubeadm join --discovery-token-ca-cert-hash` wants. */
  readonly hash: string;
}

/** kubeadm's own CA lifetime. */
const VALIDITY_YEARS = 10;

export function generateClusterCa(now: Date = new Date()): ClusterCa {
  const notAfter = new Date(now.getTime());
  notAfter.setFullYear(now.getFullYear() + VALIDITY_YEARS);
  const { keyPem, key, cert } = newKeyAndCertificate(now, notAfter);
  const subject = [{ name: 'commonName', value: 'kubernetes' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    {
      name: 'keyUsage',
      keyCertSign: true,
      cRLSign: true,
      digitalSignature: true,
      keyEncipherment: true,
      critical: true,
    },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  return { cert: certPem, key: keyPem, hash: caCertHash(certPem) };
}

/** The discovery hash of a CA certificate (PEM). */
export function caCertHash(certPem: string): string {
  const spki = createPublicKey(certPem).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}
