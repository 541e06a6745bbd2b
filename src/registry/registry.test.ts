import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseChallenge } from './challenge.js';
import { normaliseHost, parseDockerConfig, parseRegistryAuthFlag } from './credentials.js';
import { parseInsecureRegistry } from './insecure.js';
import { summarise } from './platforms.js';
import { credentialsOfPullSecret } from './pull-secret.js';
import { applyMirror, parseRegistryRef } from './reference.js';

test('references: Docker Hub defaults, ports, digests, case-kept tags', () => {
  assert.deepEqual(parseRegistryRef('nginx'), {
    host: 'registry-1.docker.io',
    repository: 'library/nginx',
    reference: 'latest',
  });
  assert.deepEqual(parseRegistryRef('docker.io/bitnami/redis:7.2-Debian'), {
    host: 'registry-1.docker.io',
    repository: 'bitnami/redis',
    reference: '7.2-Debian',
  });
  assert.deepEqual(parseRegistryRef('localhost:5000/a/b:1'), {
    host: 'localhost:5000',
    repository: 'a/b',
    reference: '1',
  });
  const digest = `sha256:${'a'.repeat(64)}`;
  assert.equal(parseRegistryRef(`mcr.microsoft.com/windows/servercore:ltsc2022@${digest}`).reference, digest);
  assert.throws(() => parseRegistryRef('Upper/Case'), { code: 'registry.bad-reference' });
});

test('mirrors: host replaced, mirror path prefixed, docker.io key for Docker Hub', () => {
  const m = { 'registry.k8s.io': 'mirror.example.com/k8s', 'docker.io': 'https://hub.example.com/' };
  assert.deepEqual(applyMirror(parseRegistryRef('registry.k8s.io/pause:3.10'), m), {
    host: 'mirror.example.com',
    repository: 'k8s/pause',
    reference: '3.10',
  });
  assert.deepEqual(applyMirror(parseRegistryRef('nginx:1'), m), {
    host: 'hub.example.com',
    repository: 'library/nginx',
    reference: '1',
  });
  assert.equal(applyMirror(parseRegistryRef('ghcr.io/a/b:1'), m).host, 'ghcr.io');
});

test('challenges: Bearer with quoted commas, Basic, junk', () => {
  assert.deepEqual(
    parseChallenge(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull,push"',
    ),
    {
      scheme: 'bearer',
      params: {
        realm: 'https://auth.docker.io/token',
        service: 'registry.docker.io',
        scope: 'repository:a/b:pull,push',
      },
    },
  );
  assert.equal(parseChallenge('Basic realm="Registry Realm"')?.scheme, 'basic');
  assert.equal(parseChallenge('Negotiate'), undefined);
  assert.equal(parseChallenge(undefined), undefined);
});

test('credentials: Docker config auths, --registry-auth reads the password from a file', () => {
  const auth = Buffer.from('me:s3cr:et').toString('base64');
  const creds = parseDockerConfig(
    JSON.stringify({ auths: { 'https://index.docker.io/v1/': { auth }, 'ghcr.io': {} } }),
    'config.json',
  );
  assert.deepEqual([...creds], [['registry-1.docker.io', { username: 'me', password: 's3cr:et' }]]);
  assert.deepEqual(
    parseRegistryAuthFlag('reg.example.com:5000=bot:/run/pw', (p) => (p === '/run/pw' ? 'pw\n' : '')),
    ['reg.example.com:5000', { username: 'bot', password: 'pw' }],
  );
  assert.throws(() => parseRegistryAuthFlag('reg.example.com=bot', () => ''), { code: 'flags.registry-auth' });
  assert.equal(normaliseHost('docker.io'), 'registry-1.docker.io');
});

test('summarise: one OS, the build only when all Windows entries agree, arm64 ignored', () => {
  assert.deepEqual(
    summarise([
      { os: 'windows', osVersion: '10.0.20348.1' },
      { os: 'windows', osVersion: '10.0.20348.9' },
    ]),
    { os: 'windows', osVersion: '10.0.20348' },
  );
  assert.deepEqual(
    summarise([
      { os: 'windows', osVersion: '10.0.20348.1' },
      { os: 'windows', osVersion: '10.0.26100.1' },
    ]),
    { os: 'windows' },
  );
  assert.deepEqual(
    summarise([
      { os: 'linux', architecture: 'amd64' },
      { os: 'windows', architecture: 'arm64' },
    ]),
    { os: 'linux' },
  );
  assert.equal(summarise([{ os: 'linux' }, { os: 'windows' }]), null);
});

test('--insecure-registry: HOST[:PORT] lowercased; schemes, paths and wildcards refused', () => {
  assert.equal(parseInsecureRegistry('Registry.Lab:5000'), 'registry.lab:5000');
  assert.equal(parseInsecureRegistry('localhost'), 'localhost');
  for (const bad of ['http://registry.lab', 'registry.lab/path', '*.lab', '', 'a b'])
    assert.throws(() => parseInsecureRegistry(bad), { code: 'flags.insecure-registry' }, bad);
});

test('pull secrets: dockerconfigjson (auth or username/password), legacy dockercfg, other types none', () => {
  const auth = Buffer.from('bot:pw:1').toString('base64');
  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
  assert.deepEqual(
    [
      ...(credentialsOfPullSecret('kubernetes.io/dockerconfigjson', {
        '.dockerconfigjson': json({ auths: { 'reg.lab:5000': { auth } } }),
      }) ?? []),
    ],
    [['reg.lab:5000', { username: 'bot', password: 'pw:1' }]],
  );
  assert.deepEqual(
    [
      ...(credentialsOfPullSecret('kubernetes.io/dockerconfigjson', {
        '.dockerconfigjson': json({ auths: { 'https://index.docker.io/v1/': { username: 'u', password: 'p' } } }),
      }) ?? []),
    ],
    [['registry-1.docker.io', { username: 'u', password: 'p' }]],
  );
  assert.deepEqual(
    [
      ...(credentialsOfPullSecret('kubernetes.io/dockercfg', { '.dockercfg': json({ 'https://reg.lab': { auth } }) }) ??
        []),
    ],
    [['reg.lab', { username: 'bot', password: 'pw:1' }]],
  );
  assert.equal(credentialsOfPullSecret('Opaque', { '.dockerconfigjson': json({ auths: {} }) }), undefined);
  assert.equal(
    credentialsOfPullSecret('kubernetes.io/dockerconfigjson', { '.dockerconfigjson': Buffer.from('{') }),
    undefined,
  );
  assert.equal(
    credentialsOfPullSecret('kubernetes.io/dockerconfigjson', { '.dockerconfigjson': Buffer.from('null') })?.size,
    0,
  );
});
