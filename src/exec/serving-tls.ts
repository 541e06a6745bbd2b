// Serving certificates the executor issues on the deployer from the cluster
// CA (the services registry's): only the certificate and its own key go to
// the host that serves them. The CA's private key never leaves the deployer,
// so whoever takes over the services node at deploy time gets a registry
// certificate, not the power to sign kubelet or admin client certificates.
import { isIP } from 'node:net';
import forge from 'node-forge';
import { HostError } from '../errors.js';
import { signServerCertificate } from '../util/x509.js';

export interface ServingTls {
  readonly cert: string;
  readonly key: string;
}

/** Re-issue when fewer days than this are left (the registry-tls check wants 30 more days). */
export const SERVING_RENEW_DAYS = 45;

/** A certificate for `dnsName` and `ip` (serverAuth only, not a CA), valid `days`, signed by the CA. */
export function issueServingTls(
  caCertPem: string,
  caKeyPem: string,
  dnsName: string,
  ip: string,
  days: number,
  now: Date = new Date(),
): ServingTls {
  if (isIP(ip) === 0)
    throw new HostError('secret.serving-ip', `serving certificate for ${dnsName}: ${ip} is not an IP address`);
  let caCert: forge.pki.Certificate;
  let caKey: forge.pki.rsa.PrivateKey;
  try {
    caCert = forge.pki.certificateFromPem(caCertPem);
    caKey = forge.pki.privateKeyFromPem(caKeyPem) as forge.pki.rsa.PrivateKey;
  } catch (error) {
    throw new HostError(
      'secret.ca-unreadable',
      'the cluster CA in the secret store cannot be read (PEM, RSA key as kubemix creates)',
      { cause: error },
    );
  }
  const altNames = [
    { type: 2, value: dnsName },
    { type: 7, ip },
  ] as const;
  return signServerCertificate({ cert: caCert, key: caKey }, dnsName, altNames, now, days);
}

/**
 * True when the certificate ends within `SERVING_RENEW_DAYS` of `now`. One
 * that cannot be read is left as the store holds it: the host's check then
 * fails on it by name, rather than kubemix overwriting a value it did not make.
 */
export function servingTlsDue(certPem: string, now: Date = new Date()): boolean {
  let notAfter: number;
  try {
    notAfter = forge.pki.certificateFromPem(certPem).validity.notAfter.getTime();
  } catch {
    return false;
  }
  return notAfter - now.getTime() < SERVING_RENEW_DAYS * 24 * 3600 * 1000;
}
