// The cluster CA: created once per cluster by the executor (never at plan
// time: a plan holds no key material). kubeadm adopts a CA it finds in
// /etc/kubernetes/pki, so the join discovery hash is known before `kubeadm
// init` runs, and the services registry's TLS chains to the same CA.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface ClusterCa {
  readonly cert: string;
  readonly key: string;
  /** `sha256:<hex>` of the DER SubjectPublicKeyInfo, as `kubeadm join --discovery-token-ca-cert-hash` wants. */
  readonly hash: string;
}

/** kubeadm's own CA lifetime. */
const VALIDITY_YEARS = 10;

export function generateClusterCa(now: Date = new Date()): ClusterCa {
  // Node's native key generation (fast); node-forge only builds and signs the certificate.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  // Positive serial: clear the top bit of a random 16-byte number.
  cert.serialNumber = `0${randomBytes(16).toString('hex').slice(1)}`;
  cert.validity.notBefore = new Date(now.getTime() - 5 * 60 * 1000);
  cert.validity.notAfter = new Date(now.getTime());
  cert.validity.notAfter.setFullYear(now.getFullYear() + VALIDITY_YEARS);
  const subject = [{ name: 'commonName', value: 'kubernetes' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, keyEncipherment: true, critical: true },
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
