// A fresh RSA key and an unsigned certificate for it, the common start of
// every certificate kubemix makes (the cluster CA, the webhook's serving
// certificate). Node generates the key natively (fast); node-forge builds
// and signs the certificate, which Node's crypto cannot.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface NewCertificate {
  readonly keyPem: string;
  readonly key: forge.pki.rsa.PrivateKey;
  readonly cert: forge.pki.Certificate;
}

/** Valid from five minutes before `now` (clock skew) until `notAfter`. */
export function newKeyAndCertificate(now: Date, notAfter: Date): NewCertificate {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  // Positive serial: a leading zero nibble keeps the top bit clear.
  cert.serialNumber = `0${randomBytes(16).toString('hex').slice(1)}`;
  cert.validity.notBefore = new Date(now.getTime() - 5 * 60 * 1000);
  cert.validity.notAfter = notAfter;
  return { keyPem, key, cert };
}

/** A subjectAltName entry: a DNS name, or an IP address (GeneralName types 2 and 7, RFC 5280 §4.2.1.6). */
export type AltName = { readonly type: 2; readonly value: string } | { readonly type: 7; readonly ip: string };

/**
 * A TLS server certificate (serverAuth only, not a CA) for `commonName` and
 * `altNames`, valid `days` from `now`, signed by the given CA; PEM cert and key.
 */
export function signServerCertificate(
  ca: { readonly cert: forge.pki.Certificate; readonly key: forge.pki.rsa.PrivateKey },
  commonName: string,
  altNames: readonly AltName[],
  now: Date,
  days: number,
): { readonly cert: string; readonly key: string } {
  const { keyPem, cert } = newKeyAndCertificate(now, new Date(now.getTime() + days * 24 * 3600 * 1000));
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...altNames] },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keyPem };
}
