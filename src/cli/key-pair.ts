// A certificate and private key the user names with flags, checked before
// anything is signed or served: both PEM, and the key the certificate's own
// (a serving key that does not match makes every TLS handshake fail; a CA
// key that does not match signs certificates nothing trusts).
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';

export interface KeyPairSource {
  /** Error code of every refusal, e.g. `guard.ca`. */
  readonly code: string;
  /** How the user named each file: `--ca-cert ca.crt`. */
  readonly certName: string;
  readonly keyName: string;
  /** A CA certificate must say so (basicConstraints CA:TRUE, RFC 5280 §4.2.1.9). */
  readonly ca: boolean;
}

/** Reads FILE of `flag`, exit 2 naming the flag when it cannot be read. */
export function readFlagFile(cwd: string, file: string, flag: string, code: string): string {
  try {
    return readFileSync(resolve(cwd, file), 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new InputError(code, `${flag} ${file}: cannot read it (${why})`, { path: flag });
  }
}

export function checkKeyPair(certPem: string, keyPem: string, src: KeyPairSource): void {
  const refuse = (path: string, message: string, hint: string): InputError =>
    new InputError(src.code, `${path}: ${message}`, { path: path.split(' ')[0] ?? path, hint });
  let cert: X509Certificate;
  try {
    if (!certPem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no BEGIN CERTIFICATE block');
    cert = new X509Certificate(certPem);
  } catch (error) {
    const hint = 'give the certificate file (-----BEGIN CERTIFICATE-----)';
    throw refuse(src.certName, `not a PEM certificate (${(error as Error).message})`, hint);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (error) {
    const hint = 'give the private key file (-----BEGIN … PRIVATE KEY-----), unencrypted';
    throw refuse(src.keyName, `not a PEM private key (${(error as Error).message})`, hint);
  }
  if (!cert.checkPrivateKey(key)) {
    const message = `this key does not belong to the certificate ${src.certName} (their public keys differ)`;
    throw refuse(src.keyName, message, 'give the key that was created together with this certificate');
  }
  if (src.ca && !cert.ca) {
    const hint = 'give the certificate of the CA that signs, e.g. the cluster CA';
    throw refuse(src.certName, 'not a CA certificate (basicConstraints CA:TRUE missing)', hint);
  }
}
