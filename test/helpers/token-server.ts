// A tiny Bearer token server on loopback, as docker-registry's `auth.token`
// expects: Basic credentials in, a JWT out, signed ES256 by a key whose
// self-signed certificate is the registry's rootcertbundle (x5c header).
import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomBytes, sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';

export interface TokenServer {
  readonly realm: string;
  readonly rootCertBundle: string;
  /** Requests seen, to assert the flow went through here. */
  readonly requests: string[];
  close(): Promise<void>;
}

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

export async function startTokenServer(
  dir: string,
  tls: { cert: string; key: string },
  user: string,
  password: string,
  service: string,
  issuer: string,
): Promise<TokenServer> {
  const keyPath = join(dir, 'token.key');
  const certPath = join(dir, 'token.crt');
  execFileSync(
    'openssl',
    [
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
      '/CN=kubemix token signer',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'ignore' },
  );
  const signingKey = createPrivateKey(readFileSync(keyPath));
  const x5c = new X509Certificate(readFileSync(certPath)).raw.toString('base64');
  const requests: string[] = [];
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const server: Server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    requests.push(url.search);
    if (req.headers.authorization !== expected) {
      res.writeHead(401).end();
      return;
    }
    const scope = url.searchParams.get('scope') ?? '';
    const [type = '', name = '', actions = ''] = scope.split(':');
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ES256', x5c: [x5c] }));
    const claims = b64url(
      JSON.stringify({
        iss: issuer,
        sub: user,
        aud: service,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomBytes(8).toString('hex'),
        access: [{ type, name, actions: actions.split(',') }],
      }),
    );
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
      key: signingKey,
      dsaEncoding: 'ieee-p1363',
    });
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token: `${header}.${claims}.${b64url(signature)}`, expires_in: 300 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    realm: `https://127.0.0.1:${port}/token`,
    rootCertBundle: certPath,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
