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
