// Image OS from a real registry: Debian's docker-registry on loopback with TLS
// from a test CA, open, behind htpasswd (Basic) and behind token auth (Bearer,
// token server in helpers/token-server.ts), serving images this test pushes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ImageCache } from '../src/registry/cache.js';
import { RegistryClient } from '../src/registry/client.js';
import type { Credential } from '../src/registry/credentials.js';
import type { RegistryError } from '../src/registry/errors.js';
import { fetchPlatforms } from '../src/registry/platforms.js';
import { parseRegistryRef } from '../src/registry/reference.js';
import { registryResolver } from '../src/registry/resolver.js';
import { freePort, registryFiles, startRegistry, type RunningRegistry } from './helpers/docker-registry.js';
import { DOCKER_MANIFEST, pushImage, pushIndex } from './helpers/oci-push.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';
import { startTokenServer, type TokenServer } from './helpers/token-server.js';
import { runCli } from './helpers/cli.js';

const USER = 'puller';
const PASSWORD = 'canary-pull-pw-19c2';

describe('registry client against docker-registry', () => {
  const tmp = scratch('registry-os');
  let pki: TestPki;
  let open: RunningRegistry;
  let basic: RunningRegistry;
  let bearer: RunningRegistry;
  let tokens: TokenServer;
  let indexDigest = '';

  before(async () => {
    pki = makePki(tmp.dir);
    const tls = pki.server('registry');
    const { storage, htpasswd } = registryFiles(tmp.dir, USER, PASSWORD);
    tokens = await startTokenServer(tmp.dir, tls, USER, PASSWORD, 'kubemix-test', 'kubemix-test-issuer');
    [open, basic, bearer] = await Promise.all([
      startRegistry(tmp.dir, 'open', storage, tls, { kind: 'none' }, pki.caCert),
      startRegistry(tmp.dir, 'basic', storage, tls, { kind: 'htpasswd', path: htpasswd }, pki.caCert),
      startRegistry(
        tmp.dir,
        'bearer',
        storage,
        tls,
        {
          kind: 'token',
          realm: tokens.realm,
          service: 'kubemix-test',
          issuer: 'kubemix-test-issuer',
          rootCertBundle: tokens.rootCertBundle,
        },
        pki.caCert,
      ),
    ]);
    const t = { host: open.host, ca: pki.caCert };
    indexDigest = await pushIndex(t, 'mirror/windows/servercore', 'ltsc2022', [
      { os: 'linux' },
      { os: 'windows', osVersion: '10.0.20348.2762' },
      { os: 'windows', osVersion: '10.0.26100.1742' },
    ]);
    await pushIndex(t, 'team/winonly', '1', [
      { os: 'windows', osVersion: '10.0.20348.2762' },
      { os: 'windows', osVersion: '10.0.26100.1742' },
    ]);
    await pushImage(t, 'team/api', '1.0', { os: 'linux' }, DOCKER_MANIFEST);
    await pushImage(t, 'team/win-api', '1.0', { os: 'windows', osVersion: '10.0.20348.2762' });
    // Named like a Linux image (library nginx, alpine tag): the registry knows better.
    await pushImage(t, 'library/nginx', '1.27-alpine', { os: 'windows', osVersion: '10.0.26100.1742' });
  });

  after(async () => {
    await Promise.all([open?.stop(), basic?.stop(), bearer?.stop(), tokens?.close()]);
    tmp.remove();
  });

  const resolverFor = (credentials: Map<string, Credential> = new Map(), mirrors: Record<string, string> = {}) => {
    const warnings: RegistryError[] = [];
    const cache = new ImageCache(join(tmp.dir, `cache-${Math.random().toString(16).slice(2)}`), 60_000);
    const resolver = registryResolver({
      cache,
      credentials,
      ca: [pki.caCert],
      timeoutMs: 5000,
      mirrors,
      warn: (_m, e) => void warnings.push(e),
    });
    return { resolver, warnings, cache };
  };

  it('reads every platform of an OCI index, os.version included', async () => {
    const client = new RegistryClient({ credentials: new Map(), ca: [pki.caCert], timeoutMs: 5000 });
    const image = await fetchPlatforms(client, parseRegistryRef(`${open.host}/mirror/windows/servercore:ltsc2022`));
    assert.equal(image.digest, indexDigest);
    assert.deepEqual(image.platforms, [
      { os: 'linux', architecture: 'amd64' },
      { os: 'windows', osVersion: '10.0.20348.2762', architecture: 'amd64' },
      { os: 'windows', osVersion: '10.0.26100.1742', architecture: 'amd64' },
    ]);
  });

  it('an index for both OSes has no single OS: null, so the name heuristic cannot claim Windows', async () => {
    const { resolver } = resolverFor();
    assert.equal(await resolver.resolve(`${open.host}/mirror/windows/servercore:ltsc2022`), null);
    assert.deepEqual(await resolver.resolve(`${open.host}/team/winonly:1`), { os: 'windows', source: 'registry' });
  });

  it('single manifests (Docker and OCI) answer through their config blob, then from the cache', async () => {
    const { resolver, cache } = resolverFor();
    assert.deepEqual(await resolver.resolve(`${open.host}/team/api:1.0`), { os: 'linux', source: 'registry' });
    assert.deepEqual(await resolver.resolve(`${open.host}/team/win-api:1.0`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'registry',
    });
    assert.deepEqual(await resolver.resolve(`${open.host}/team/win-api:1.0`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'cache',
    });
    // A fresh process reads the same answer from disk.
    const again = registryResolver({
      cache: new ImageCache(cache.dir, 60_000),
      credentials: new Map(),
      ca: [],
      timeoutMs: 1000,
      mirrors: {},
      warn: () => undefined,
    });
    assert.deepEqual(await again.resolve(`${open.host}/team/win-api:1.0`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'cache',
    });
  });

  it('the registry wins over a name that looks Linux', async () => {
    const { resolver } = resolverFor();
    assert.deepEqual(await resolver.resolve(`${open.host}/library/nginx:1.27-alpine`), {
      os: 'windows',
      osVersion: '10.0.26100',
      source: 'registry',
    });
  });

  it('Basic auth: refused without credentials (a warning), answers with them', async () => {
    const anon = resolverFor();
    assert.equal(await anon.resolver.resolve(`${basic.host}/team/api:1.0`), undefined);
    assert.equal(anon.warnings[0]?.code, 'registry.unauthorized');
    const { resolver, warnings } = resolverFor(new Map([[basic.host, { username: USER, password: PASSWORD }]]));
    assert.deepEqual(await resolver.resolve(`${basic.host}/team/api:1.0`), { os: 'linux', source: 'registry' });
    assert.deepEqual(warnings, []);
  });

  it('Bearer auth: token from the challenge realm with the pull scope, then the manifest', async () => {
    const anon = resolverFor();
    assert.equal(await anon.resolver.resolve(`${bearer.host}/team/win-api:1.0`), undefined);
    assert.equal(anon.warnings[0]?.code, 'registry.unauthorized');
    const { resolver, warnings } = resolverFor(new Map([[bearer.host, { username: USER, password: PASSWORD }]]));
    assert.deepEqual(await resolver.resolve(`${bearer.host}/team/win-api:1.0`), {
      os: 'windows',
      osVersion: '10.0.20348',
      source: 'registry',
    });
    assert.deepEqual(warnings, []);
    assert.ok(
      tokens.requests.some(
        (q) => q.includes('scope=repository%3Ateam%2Fwin-api%3Apull') && q.includes('service=kubemix-test'),
      ),
      tokens.requests.join(' '),
    );
  });

  it('mirrors: an upstream registry is read through its mirror', async () => {
    const { resolver } = resolverFor(new Map(), { 'images.example.invalid': `${open.host}/team` });
    assert.deepEqual(await resolver.resolve('images.example.invalid/api:1.0'), { os: 'linux', source: 'registry' });
  });

  it('an unreachable registry is a warning, once per host, and no answer', async () => {
    const port = await freePort();
    const { resolver, warnings } = resolverFor();
    assert.equal(await resolver.resolve(`127.0.0.1:${port}/a:1`), undefined);
    assert.equal(await resolver.resolve(`127.0.0.1:${port}/b:1`), undefined);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['registry.unreachable'],
    );
  });

  it('kubemix lint: the finding says registry, then cache; --offline never asks the registry', async () => {
    const manifest = join(tmp.dir, 'web.yaml');
    const image = `${basic.host}/library/nginx:1.27-alpine`;
    writeFileSync(
      manifest,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: web\n      image: ${image}\n`,
    );
    writeFileSync(join(tmp.dir, 'pw'), `${PASSWORD}\n`, { mode: 0o600 });
    const cacheDir = join(tmp.dir, 'lint-cache');
    const flags = [
      '--format',
      'json',
      '--ca-file',
      pki.caCertPath,
      '--cache-dir',
      cacheDir,
      '--registry-auth',
      `${basic.host}=${USER}:${join(tmp.dir, 'pw')}`,
    ];
    const osOf = (stdout: string): unknown =>
      (JSON.parse(stdout) as { findings: { rule: string; message: string; osSource?: string }[] }).findings
        .filter((f) => f.rule === 'placement/missing-os')
        .map((f) => [f.osSource, /its images are (\w+)/.exec(f.message)?.[1]]);
    const first = await runCli(['lint', manifest, ...flags], { env: { HOME: tmp.dir } });
    assert.equal(first.code, 1, first.stderr);
    assert.deepEqual(osOf(first.stdout), [['registry', 'windows']]);
    assert.ok(!first.stdout.includes(PASSWORD) && !first.stderr.includes(PASSWORD));
    const second = await runCli(['lint', manifest, ...flags], { env: { HOME: tmp.dir } });
    assert.deepEqual(osOf(second.stdout), [['cache', 'windows']]);
    const offlineEmpty = await runCli(
      ['lint', manifest, '--offline', '--format', 'json', '--cache-dir', join(tmp.dir, 'empty-cache')],
      { env: { HOME: tmp.dir } },
    );
    assert.deepEqual(osOf(offlineEmpty.stdout), [['heuristic', 'linux']]);
    const offlineCached = await runCli(['lint', manifest, '--offline', '--format', 'json', '--cache-dir', cacheDir], {
      env: { HOME: tmp.dir },
    });
    assert.deepEqual(osOf(offlineCached.stdout), [['cache', 'windows']]);
  });

  it('kubemix lint: an unreachable registry is a warning on stderr, the exit code comes from the findings', async () => {
    const port = await freePort();
    const manifest = join(tmp.dir, 'placed.yaml');
    writeFileSync(
      manifest,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\nspec:\n  os:\n    name: linux\n  nodeSelector:\n    kubernetes.io/os: linux\n  containers:\n    - name: a\n      image: 127.0.0.1:${port}/a:1\n    - name: b\n      image: 127.0.0.1:${port}/b:1\n`,
    );
    const res = await runCli(['lint', manifest, '--cache-dir', join(tmp.dir, 'c3'), '--registry-timeout', '2'], {
      env: { HOME: tmp.dir },
    });
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.equal(res.stderr.match(/^warning: .*ECONNREFUSED/gm)?.length, 1, res.stderr);
  });
});
