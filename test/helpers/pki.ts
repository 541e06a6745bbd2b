// Throwaway PKI for loopback servers: a CA and server certificates for
// 127.0.0.1/localhost, made with openssl like an operator would.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestPki {
  readonly caCert: string;
  readonly caCertPath: string;
  readonly caKeyPath: string;
  /** Issues a server certificate for 127.0.0.1 and localhost; returns its paths. */
  server(name: string): { cert: string; key: string };
}

const ssl = (args: string[]): void => void execFileSync('openssl', args, { stdio: 'ignore' });

export function makePki(dir: string): TestPki {
  const caKeyPath = join(dir, 'ca.key');
  const caCertPath = join(dir, 'ca.crt');
  ssl([
    'req',
    '-x509',
    '-nodes',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-days',
    '2',
    '-subj',
    '/CN=kubemix test CA',
    '-keyout',
    caKeyPath,
    '-out',
    caCertPath,
  ]);
  return {
    caCert: readFileSync(caCertPath, 'utf8'),
    caCertPath,
    caKeyPath,
    server(name) {
      const key = join(dir, `${name}.key`);
      const csr = join(dir, `${name}.csr`);
      const cert = join(dir, `${name}.crt`);
      const ext = join(dir, `${name}.ext`);
      ssl([
        'req',
        '-new',
        '-nodes',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-subj',
        `/CN=${name}`,
        '-keyout',
        key,
        '-out',
        csr,
      ]);
      writeFileSync(
        ext,
        'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n',
      );
      ssl([
        'x509',
        '-req',
        '-sha256',
        '-days',
        '2',
        '-in',
        csr,
        '-CA',
        caCertPath,
        '-CAkey',
        caKeyPath,
        '-set_serial',
        `0x${Date.now().toString(16)}${name.length}`,
        '-extfile',
        ext,
        '-out',
        cert,
      ]);
      return { cert, key };
    },
  };
}
