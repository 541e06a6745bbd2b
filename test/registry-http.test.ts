// Plain-HTTP (insecure) registries: Debian's docker-registry on loopback with
// no TLS, open, behind htpasswd (Basic) and behind token auth (Bearer, the
// token server on HTTPS), reached only because the test names it with
// --insecure-registry. Hosts not named are spoken to over TLS only: a relay
// in front of them records that no connection ever began in clear.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ImageCache } from '../src/registry/cache.js';
import type { Credential } from '../src/registry/credentials.js';
import type { RegistryError } from '../src/registry/errors.js';
import { registryGet } from '../src/registry/http.js';
import { registryResolver } from '../src/registry/resolver.js';
import { runCli } from './helpers/cli.js';
import { registryFiles, startRegistry, type RunningRegistry } from './helpers/docker-registry.js';
import { pushImage } from './helpers/oci-push.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';
import { startTcpRecorder, type TcpRecorder } from './helpers/tcp-recorder.js';
import { startTokenServer, type TokenServer } from './helpers/token-server.js';

const USER = 'puller';
const PASSWORD = 'canary-http-pw-7f31';
const TLS_HANDSHAKE = 0x16;
const port = (server: Server): number => {
  const a = server.address();
  return typeof a === 'object' && a !== null ? a.port : 0;
};

describe('plain-HTTP registries, only when named', () => {
  const tmp = scratch('registry-http');
  let pki: TestPki;
  let open: RunningRegistry;
  let basic: RunningRegistry;
  let bearer: RunningRegistry;
  let tlsOnly: RunningRegistry;
  let tokens: TokenServer;
  const relays: TcpRecorder[] = [];

  before(async () => {
    pki = makePki(tmp.dir);
    const tls = pki.server('registry');
    const { storage, htpasswd } = registryFiles(tmp.dir, USER, PASSWORD);
    tokens = await startTokenServer(tmp.dir, tls, USER, PASSWORD, 'kubemix-http', 'kubemix-http-issuer');
    [open, basic, bearer, tlsOnly] = await Promise.all([
      startRegistry(tmp.dir, 'open', storage, undefined, { kind: 'none' }, ''),
      startRegistry(tmp.dir, 'basic', storage, undefined, { kind: 'htpasswd', path: htpasswd }, ''),
      startRegistry(
        tmp.dir,
        'bearer',
        storage,
        undefined,
        {
          kind: 'token',
          realm: tokens.realm,
          service: 'kubemix-http',
          issuer: 'kubemix-http-issuer',
          rootCertBundle: tokens.rootCertBundle,
        },
        '',
      ),
      startRegistry(tmp.dir, 'tls', storage, tls, { kind: 'none' }, pki.caCert),
    ]);
    const t = { host: open.host, ca: undefined };
    await pushImage(t, 'team/api', '1.0', { os: 'linux' });
    // Named like a Linux image: only the registry can say it is Windows.
    await pushImage(t, 'team/web', 'alpine', { os: 'windows', osVersion: '10.0.20348.2762' });
  });

  after(async () => {
    await Promise.all([
      open?.stop(),
      basic?.stop(),
      bearer?.stop(),
      tlsOnly?.stop(),
      tokens?.close(),
      ...relays.map((r) => r.close()),
    ]);
    tmp.remove();
  });

  const resolverFor = (
    insecure: string[],
    credentials: Map<string, Credential> = new Map(),
    ca: string[] = [pki.caCert],
  ) => {
    const warnings: RegistryError[] = [];
    const cache = new ImageCache(undefined, 60_000);
    const resolver = registryResolver({
      cache,
      credentials,
      ca,
      insecure: new Set(insecure),
      timeoutMs: 5000,
      mirrors: {},
      warn: (_m, e) => void warnings.push(e),
    });
    return { resolver, warnings };
  };
  const relay = async (port: number): Promise<TcpRecorder> => {
    const r = await startTcpRecorder(port);
    relays.push(r);
    return r;
  };

  it('auth off: the image OS over plain HTTP, the registry winning over the name', async () => {
    const { resolver, warnings } = resolverFor([open.host]);
    assert.deepEqual(await resolver.resolve(`${open.host}/team/web:alpine`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'registry',
    });
    assert.deepEqual(await resolver.resolve(`${open.host}/team/api:1.0`), { os: 'linux', source: 'registry' });
    assert.deepEqual(warnings, []);
  });

  it('auth on (Basic): refused without credentials, answers with them over HTTP', async () => {
    const anon = resolverFor([basic.host]);
    assert.equal(await anon.resolver.resolve(`${basic.host}/team/web:alpine`), undefined);
    assert.deepEqual(
      anon.warnings.map((w) => w.code),
      ['registry.unauthorized'],
    );
    const { resolver, warnings } = resolverFor(
      [basic.host],
      new Map([[basic.host, { username: USER, password: PASSWORD }]]),
    );
    assert.deepEqual(await resolver.resolve(`${basic.host}/team/web:alpine`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'registry',
    });
    assert.deepEqual(warnings, []);
  });

  it('auth on (Bearer): an HTTP registry with its token server on HTTPS', async () => {
    const { resolver, warnings } = resolverFor(
      [bearer.host],
      new Map([[bearer.host, { username: USER, password: PASSWORD }]]),
    );
    assert.deepEqual(await resolver.resolve(`${bearer.host}/team/api:1.0`), { os: 'linux', source: 'registry' });
    assert.deepEqual(warnings, []);
    assert.ok(
      tokens.requests.some((q) => q.includes('service=kubemix-http')),
      tokens.requests.join(' '),
    );
  });

  it('an HTTP registry not named insecure is spoken to over TLS only, fails, and is not retried in clear', async () => {
    const r = await relay(Number(open.host.split(':')[1]));
    const { resolver, warnings } = resolverFor([]);
    assert.equal(await resolver.resolve(`${r.host}/team/web:alpine`), undefined);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['registry.unreachable'],
    );
    assert.ok(r.firstBytes.length >= 1);
    assert.deepEqual(new Set(r.firstBytes), new Set([TLS_HANDSHAKE]));
  });

  it('a TLS registry whose certificate is not trusted is an error, never a downgrade to HTTP', async () => {
    const r = await relay(Number(tlsOnly.host.split(':')[1]));
    // The test CA is not given: verification fails.
    const { resolver, warnings } = resolverFor([], new Map(), []);
    assert.equal(await resolver.resolve(`${r.host}/team/api:1.0`), undefined);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['registry.unreachable'],
    );
    assert.match(warnings[0]?.message ?? '', /VERIFY|CERT|SIGNED|ISSUER/i);
    assert.deepEqual(new Set(r.firstBytes), new Set([TLS_HANDSHAKE]));
    // With its CA it answers over TLS, as before.
    const trusted = resolverFor([]);
    assert.deepEqual(await trusted.resolver.resolve(`${tlsOnly.host}/team/api:1.0`), {
      os: 'linux',
      source: 'registry',
    });
  });

  it('http:// URLs (a token realm, a redirect) are refused unless their host is named insecure', async () => {
    await assert.rejects(registryGet(`http://${open.host}/v2/`, { timeoutMs: 2000, maxBytes: 1024 }), {
      code: 'registry.insecure',
    });
    await assert.rejects(
      registryGet(`http://${open.host}/v2/`, { timeoutMs: 2000, maxBytes: 1024, insecure: new Set([basic.host]) }),
      { code: 'registry.insecure' },
    );
    assert.equal(
      (
        await registryGet(`http://${open.host}/v2/`, {
          timeoutMs: 2000,
          maxBytes: 1024,
          insecure: new Set([open.host]),
        })
      ).status,
      200,
    );
    // An insecure registry redirecting to http on a host that is not named (blob storage, say).
    const redirector = createServer((_req, res) =>
      res.writeHead(307, { location: `http://localhost:${port(redirector)}/blob` }).end(),
    );
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${port(redirector)}`;
    try {
      await assert.rejects(
        registryGet(`http://${host}/v2/a/blobs/x`, { timeoutMs: 2000, maxBytes: 1024, insecure: new Set([host]) }),
        { code: 'registry.insecure-redirect' },
      );
    } finally {
      redirector.close();
    }
  });

  it('kubemix lint --insecure-registry with --registry-auth: the finding says registry; no password in the output', async () => {
    const manifest = join(tmp.dir, 'web.yaml');
    writeFileSync(
      manifest,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: web\n      image: ${basic.host}/team/web:alpine\n`,
    );
    writeFileSync(join(tmp.dir, 'pw'), `${PASSWORD}\n`, { mode: 0o600 });
    const flags = [
      '--format',
      'json',
      '--cache-dir',
      join(tmp.dir, 'lint-cache'),
      '--registry-auth',
      `${basic.host}=${USER}:${join(tmp.dir, 'pw')}`,
    ];
    const res = await runCli(['lint', manifest, ...flags, '--insecure-registry', basic.host], {
      env: { HOME: tmp.dir },
    });
    assert.equal(res.code, 1, res.stderr);
    const findings = (
      JSON.parse(res.stdout) as { findings: { rule: string; message: string; osSource?: string }[] }
    ).findings.filter((f) => f.rule === 'placement/missing-os');
    assert.deepEqual(
      findings.map((f) => [f.osSource, /its images are (\w+)/.exec(f.message)?.[1]]),
      [['registry', 'windows']],
    );
    assert.ok(!res.stdout.includes(PASSWORD) && !res.stderr.includes(PASSWORD));
    // Without the flag: TLS to an HTTP port, a warning, and the name heuristic.
    const without = await runCli(['lint', manifest, ...flags, '--cache-dir', join(tmp.dir, 'c2')], {
      env: { HOME: tmp.dir },
    });
    assert.match(without.stderr, /^warning: .*image OS not from the registry/m);
    assert.ok(!without.stdout.includes(PASSWORD) && !without.stderr.includes(PASSWORD));
  });

  it('--insecure-registry takes HOST[:PORT] only', async () => {
    for (const bad of ['http://reg.lab:5000', 'reg.lab:5000/path', '*.lab']) {
      const res = await runCli(['lint', '--insecure-registry', bad, join(tmp.dir, 'web.yaml')], {
        env: { HOME: tmp.dir },
      });
      assert.equal(res.code, 2, `${bad}: ${res.stderr}`);
      assert.match(res.stderr, /flags\.insecure-registry|expected HOST or HOST:PORT/);
    }
  });
});
