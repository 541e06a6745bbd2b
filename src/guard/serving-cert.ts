// The webhook's serving certificate, signed by the cluster CA (or the CA the
// user gives). The API server verifies it against the caBundle of the
// WebhookConfigurations, so it must name the Service's DNS names.
import { signServerCertificate } from '../util/x509.js';
import forge from 'node-forge';
import { InputError } from '../errors.js';

export interface ServingCert {
  readonly cert: string;
  readonly key: string;
}

const VALIDITY_DAYS = 365;

export function signServingCert(
  caCertPem: string,
  caKeyPem: string,
  dnsNames: readonly string[],
  now: Date = new Date(),
): ServingCert {
  let caCert: forge.pki.Certificate;
  let caKey: forge.pki.rsa.PrivateKey;
  try {
    caCert = forge.pki.certificateFromPem(caCertPem);
    caKey = forge.pki.privateKeyFromPem(caKeyPem) as forge.pki.rsa.PrivateKey;
  } catch (error) {
    throw new InputError(
      'guard.ca',
      'cannot read the CA certificate and key (PEM, RSA key as kubemix and kubeadm create)',
      { cause: error },
    );
  }
  const altNames = dnsNames.map((value) => ({ type: 2 as const, value }));
  return signServerCertificate(
    { cert: caCert, key: caKey },
    dnsNames[0] ?? 'kubemix-guard',
    altNames,
    now,
    VALIDITY_DAYS,
  );
}
