// The webhook reads a pod's imagePullSecrets and uses them for that pod's
// image lookups. The registry is real (Debian's docker-registry over TLS
// behind htpasswd: it refuses anonymous pulls), the Kubernetes API is a
// stand-in (helpers/fake-apiserver.ts: GET one Secret, bearer token checked),
// the webhook is the `kubemix guard serve` process. The private image is
// named like a Linux image, so only the registry, reached with the pull
// secret, can say it is Windows.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import { PullSecretReader } from '../src/guard/pull-secrets.js';
import { inClusterAccess, kubeconfigAccess } from '../src/kube/config.js';
import { getSecret } from '../src/kube/secrets.js';
import type { KubemixError } from '../src/errors.js';
import { repoPath } from './helpers/cli.js';
import { freePort, registryFiles, startRegistry, type RunningRegistry } from './helpers/docker-registry.js';
import { kubeconfigFor, startFakeApiServer, type FakeApiServer } from './helpers/fake-apiserver.js';
import { pushImage } from './helpers/oci-push.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';

type Obj = Record<string, any>;
const USER = 'puller';
const PASSWORD = 'canary-pullsecret-pw-5d0e';
const TOKEN = 'canary-sa-token-a81c';
const IMAGE_PATH = 'team/private:alpine';

describe('guard serve with imagePullSecrets', () => {
  const tmp = scratch('guard-pull-secrets');
  let pki: TestPki;
  let open: RunningRegistry;
  let basic: RunningRegistry;
  let api: FakeApiServer;
  let guard: ChildProcess;
  let guardPort = 0;
  let stderr = '';

  before(async () => {
    pki = makePki(tmp.dir);
    const { storage, htpasswd } = registryFiles(tmp.dir, USER, PASSWORD);
    const tls = pki.server('registry');
    [open, basic] = await Promise.all([
      startRegistry(tmp.dir, 'open', storage, tls, { kind: 'none' }, pki.caCert),
      startRegistry(tmp.dir, 'basic', storage, tls, { kind: 'htpasswd', path: htpasswd }, pki.caCert),
    ]);
    await pushImage({ host: open.host, ca: pki.caCert }, 'team/private', 'alpine', {
      os: 'windows',
      osVersion: '10.0.20348.2762',
    });
    const auth = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    const wrong = Buffer.from(`${USER}:not-the-password`).toString('base64');
    api = await startFakeApiServer(pki.server('apiserver'), TOKEN, {
      'team-a/regcred': {
        type: 'kubernetes.io/dockerconfigjson',
        data: {
          '.dockerconfigjson': JSON.stringify({
            auths: { [basic.host]: { username: USER, password: PASSWORD, auth } },
          }),
        },
      },
      'team-b/regcred': {
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': JSON.stringify({ auths: { [basic.host]: { auth: wrong } } }) },
      },
      'team-c/legacy': {
        type: 'kubernetes.io/dockercfg',
        data: { '.dockercfg': JSON.stringify({ [`https://${basic.host}`]: { auth } }) },
      },
      'team-d/regcred': { type: 'Opaque', data: { password: PASSWORD } },
    });
    writeFileSync(join(tmp.dir, 'kubeconfig'), kubeconfigFor(api.url, pki.caCert, TOKEN), { mode: 0o600 });
    const guardTls = pki.server('guard');
    guardPort = await freePort();
    guard = spawn(
      process.execPath,
      [
        repoPath('bin', 'kubemix.js'),
        'guard',
        'serve',
        '--cluster',
        repoPath('examples', 'k8s-libvirt-1-1-1.yaml'),
        '--listen',
        `127.0.0.1:${guardPort}`,
        '--tls-cert',
        guardTls.cert,
        '--tls-key',
        guardTls.key,
        '--kubeconfig',
        join(tmp.dir, 'kubeconfig'),
        '--ca-file',
        pki.caCertPath,
        '--cache-dir',
        join(tmp.dir, 'cache'),
        '--registry-timeout',
        '5',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, HOME: tmp.dir, DOCKER_CONFIG: join(tmp.dir, 'no-docker') },
      },
    );
    guard.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    for (let i = 0; i < 100 && !stderr.includes('"listening"'); i += 1) await new Promise((r) => setTimeout(r, 100));
    assert.match(stderr, /"msg":"listening".*"pullSecrets":"kubeconfig /);
  });

  after(async () => {
    if (guard?.pid !== undefined && guard.exitCode === null) {
      const exited = new Promise((r) => guard.once('exit', r));
      process.kill(guard.pid, 'SIGTERM');
      await exited;
    }
    await Promise.all([open?.stop(), basic?.stop(), api?.close()]);
    tmp.remove();
  });

  const admit = (namespace: string, object: Obj): Promise<{ result: Obj; warnings: string[] }> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `u-${namespace}`,
          kind: { group: '', version: 'v1', kind: object['kind'] },
          operation: 'CREATE',
          namespace,
          object,
        },
      });
      const req = request(
        {
          host: '127.0.0.1',
          port: guardPort,
          path: '/mutate',
          method: 'POST',
          ca: pki.caCert,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const response = (JSON.parse(Buffer.concat(chunks).toString()) as Obj)['response'] as Obj;
            const patch =
              response['patch'] === undefined
                ? []
                : (JSON.parse(Buffer.from(response['patch'], 'base64').toString()) as fastJsonPatch.Operation[]);
            resolve({
              result: fastJsonPatch.applyPatch(structuredClone(object), patch, true, false).newDocument,
              warnings: (response['warnings'] ?? []) as string[],
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const pod = (name: string, secrets: string[]): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      ...(secrets.length === 0 ? {} : { imagePullSecrets: secrets.map((s) => ({ name: s })) }),
      containers: [{ name: 'app', image: `${basic.host}/${IMAGE_PATH}` }],
    },
  });
  const reads = (path: string) => api.requests.filter((r) => r.path === path);

  it('team-a: the dockerconfigjson pull secret is read with the token and opens the private image: Windows from the registry', async () => {
    const { result, warnings } = await admit('team-a', pod('a', ['regcred']));
    assert.deepEqual(result['spec']['os'], { name: 'windows' });
    assert.equal(result['spec']['runtimeClassName'], 'windows-2022');
    assert.deepEqual(warnings, ['kubemix guard placed Pod on windows (image OS from registry)']);
    assert.deepEqual(reads('/api/v1/namespaces/team-a/secrets/regcred'), [
      { method: 'GET', path: '/api/v1/namespaces/team-a/secrets/regcred', authorized: true },
    ]);
  });

  it('the Secret is read once for a burst of pods, and its answer is cached for its namespace', async () => {
    const { result } = await admit('team-a', pod('a2', ['regcred']));
    assert.deepEqual(result['spec']['os'], { name: 'windows' });
    assert.equal(reads('/api/v1/namespaces/team-a/secrets/regcred').length, 1);
  });

  it("other namespaces never get team-a's answer: no secret, a Secret of the same name with other credentials, an Opaque one, a missing one", async () => {
    for (const [ns, secrets] of [
      ['team-e', []],
      ['team-b', ['regcred']],
      ['team-d', ['regcred']],
      ['team-f', ['nosuch']],
    ] as const) {
      const { result, warnings } = await admit(ns, pod(ns, [...secrets]));
      assert.deepEqual(result['spec']['os'], { name: 'linux' }, ns);
      assert.deepEqual(warnings, ['kubemix guard placed Pod on linux (image OS from heuristic)'], ns);
    }
    const lines = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Obj);
    const codes = lines.filter((l) => l['level'] === 'warn').map((l) => l['code']);
    for (const code of ['registry.unauthorized', 'kube.secret-type', 'kube.secret-missing'])
      assert.ok(codes.includes(code), `${code} in ${codes.join(',')}`);
  });

  it("team-c: a legacy dockercfg Secret on a Deployment's pod template", async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'c' },
      spec: {
        selector: { matchLabels: { app: 'c' } },
        template: { metadata: { labels: { app: 'c' } }, spec: pod('c', ['legacy'])['spec'] },
      },
    };
    const { result } = await admit('team-c', deployment);
    assert.deepEqual(result['spec']['template']['spec']['os'], { name: 'windows' });
  });

  it('the log holds no password, no token and no Secret data', () => {
    for (const secret of [PASSWORD, TOKEN, Buffer.from(`${USER}:${PASSWORD}`).toString('base64')])
      assert.ok(!stderr.includes(secret));
    for (const line of stderr.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
  });

  it('a wrong token: 401 from the API, a warning, no credentials', async () => {
    writeFileSync(join(tmp.dir, 'bad-kubeconfig'), kubeconfigFor(api.url, pki.caCert, 'not-the-token'));
    const warnings: KubemixError[] = [];
    const reader = new PullSecretReader({
      access: kubeconfigAccess(join(tmp.dir, 'bad-kubeconfig')),
      timeoutMs: 5000,
      ttlMs: 60_000,
      warn: (_m, e) => void warnings.push(e),
    });
    assert.equal((await reader.credentials('team-a', ['regcred'])).size, 0);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['kube.unauthorized'],
    );
    assert.equal(api.requests.at(-1)?.authorized, false);
  });

  it('in-cluster: the service account token and CA files, the server from KUBERNETES_SERVICE_*', async () => {
    const sa = join(tmp.dir, 'serviceaccount');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), `${TOKEN}\n`);
    writeFileSync(join(sa, 'ca.crt'), pki.caCert);
    const url = new URL(api.url);
    assert.equal(inClusterAccess({}, sa), undefined);
    const access = inClusterAccess({ KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port }, sa);
    assert.ok(access !== undefined);
    const secret = await getSecret(access, 'team-c', 'legacy', 5000);
    assert.equal(secret?.type, 'kubernetes.io/dockercfg');
    assert.equal(await getSecret(access, 'team-c', 'nosuch', 5000), undefined);
    await assert.rejects(getSecret(access, 'Team C', 'x', 5000), { code: 'kube.bad-name' });
  });
});
