// guard for real: a kube-apiserver v1.36.3 built here (test/helpers/
// kube-control-plane.ts) calls `kubemix guard serve` through what `kubemix
// guard install` wrote — its Service, its Mutating/ValidatingWebhookConfiguration
// with the caBundle, its serving certificate — for examples/k8s-libvirt-1-1-1
// (a Windows Server 2022 worker). The API server resolves the Service to its
// ClusterIP as it does in any cluster; the fixture's egress proxy stands in
// for kube-proxy and the pod network, connecting that ClusterIP:443 to guard
// on loopback. guard reads image OSes from Debian's docker-registry on
// loopback, and pull secrets through the API server with its own
// ServiceAccount's token, under the RBAC guard install grants.
// - a Windows-image pod without placement comes back placed (mutated by guard);
// - one that cannot run (an image for another Windows build) is refused;
// - a private image placed by the registry's answer reached with the pod's pull secret;
// - guard stopped: failurePolicy Fail refuses pods outside kube-system and
//   guard's own namespace, Ignore admits them unplaced (docs/guard.md).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { repoPath, runCli } from './helpers/cli.js';
import { freePort, registryFiles, startRegistry, type RunningRegistry } from './helpers/docker-registry.js';
import { startControlPlane, type ControlPlane } from './helpers/kube-control-plane.js';
import { pushImage } from './helpers/oci-push.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';

type Obj = Record<string, any>;
const SPEC = repoPath('examples', 'k8s-libvirt-1-1-1.yaml');
const NS = 'kubemix-guard';
const USER = 'puller';
const PASSWORD = 'canary-guard-real-pw-31c4';

const docs = (path: string): Obj[] => parseAllDocuments(readFileSync(path, 'utf8')).map((d) => d.toJS() as Obj);

describe('guard serve called by a real kube-apiserver', () => {
  const tmp = scratch('guard-real');
  let cp: ControlPlane;
  let pki: TestPki;
  let open: RunningRegistry;
  let basic: RunningRegistry;
  let guard: ChildProcess | undefined;
  let guardPort = 0;
  let clusterIp = '';
  let stderr = '';

  const install = async (out: string, failurePolicy: 'Fail' | 'Ignore'): Promise<void> => {
    const r = await runCli([
      'guard',
      'install',
      '--cluster',
      SPEC,
      '--ca-cert',
      cp.caCertPath,
      '--ca-key',
      cp.caKeyPath,
      '--failure-policy',
      failurePolicy,
      '--timeout',
      '5',
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    for (const f of ['secret.yaml', 'guard.yaml'])
      for (const o of docs(join(out, f))) {
        const res = await cp.apply(o, false);
        assert.ok(res.status === 200 || res.status === 201, `${f} ${o['kind']}: ${JSON.stringify(res.body)}`);
      }
  };

  const startGuard = async (): Promise<void> => {
    const secret = docs(join(tmp.dir, 'install', 'secret.yaml')).find((o) => o['kind'] === 'Secret')!;
    const cert = join(tmp.dir, 'tls.crt');
    const key = join(tmp.dir, 'tls.key');
    writeFileSync(cert, Buffer.from(secret['data']['tls.crt'], 'base64'));
    writeFileSync(key, Buffer.from(secret['data']['tls.key'], 'base64'), { mode: 0o600 });
    stderr = '';
    guard = spawn(
      process.execPath,
      [
        repoPath('bin', 'kubemix.js'),
        'guard',
        'serve',
        '--cluster',
        SPEC,
        '--listen',
        `127.0.0.1:${guardPort}`,
        '--tls-cert',
        cert,
        '--tls-key',
        key,
        '--kubeconfig',
        join(tmp.dir, 'guard.kubeconfig'),
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
    guard.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    for (let i = 0; i < 150 && !stderr.includes('"listening"'); i += 1) await new Promise((r) => setTimeout(r, 100));
    assert.match(stderr, /"msg":"listening".*"pullSecrets":"kubeconfig /);
  };

  const stopGuard = async (): Promise<void> => {
    if (guard?.pid === undefined || guard.exitCode !== null) return;
    const exited = new Promise((r) => guard?.once('exit', r));
    process.kill(guard.pid, 'SIGTERM');
    await exited;
  };

  before(async () => {
    pki = makePki(tmp.dir);
    const files = registryFiles(tmp.dir, USER, PASSWORD);
    const tls = pki.server('registry');
    [open, basic] = await Promise.all([
      startRegistry(tmp.dir, 'open', files.storage, tls, { kind: 'none' }, pki.caCert),
      startRegistry(tmp.dir, 'basic', files.storage, tls, { kind: 'htpasswd', path: files.htpasswd }, pki.caCert),
    ]);
    const target = { host: open.host, ca: pki.caCert };
    await pushImage(target, 'team/win-app', '1', { os: 'windows', osVersion: '10.0.20348.2762' });
    await pushImage(target, 'team/win-2025', '1', { os: 'windows', osVersion: '10.0.26100.1742' });
    await pushImage(target, 'team/private', 'alpine', { os: 'windows', osVersion: '10.0.20348.2762' });

    cp = await startControlPlane({ name: 'guard' });
    // The cluster as kubemix deploys it: its manifests (the RuntimeClasses guard places pods with).
    const plan = join(tmp.dir, 'plan');
    const planned = await runCli(['plan', SPEC, '--out', plan]);
    assert.equal(planned.code, 0, planned.stderr);
    for (const o of docs(join(plan, 'artifacts', 'cluster', 'manifests', 'windows-runtimeclasses.yaml')))
      assert.ok([200, 201].includes((await cp.apply(o, false)).status));
    await install(join(tmp.dir, 'install'), 'Fail');

    // guard's own ServiceAccount token (TokenRequest), as its pod would have it: pull secrets under real RBAC.
    const token = await cp.call('POST', `/api/v1/namespaces/${NS}/serviceaccounts/${NS}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    assert.equal(token.status, 201, JSON.stringify(token.body));
    writeFileSync(
      join(tmp.dir, 'guard.kubeconfig'),
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: { server: cp.url, 'certificate-authority-data': Buffer.from(cp.ca).toString('base64') },
          },
        ],
        users: [{ name: 'guard', user: { token: token.body['status']['token'] } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'guard' } }],
        'current-context': 'c',
      }),
      { mode: 0o600 },
    );
    const svc = await cp.call('GET', `/api/v1/namespaces/${NS}/services/kubemix-guard`);
    clusterIp = String(svc.body['spec']['clusterIP']);
    guardPort = await freePort();
    // kube-proxy's part: the Service's ClusterIP:443 reaches guard's 8443 — here guard's loopback port.
    cp.egress.route(`${clusterIp}:443`, guardPort);
    await startGuard();
    for (const ns of ['team', 'team-a', 'team-b', 'team-c', 'team-d'])
      assert.equal(
        (await cp.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }))
          .status,
        201,
      );
  });

  after(async () => {
    await stopGuard();
    await cp?.stop();
    await Promise.all([open?.stop(), basic?.stop()]);
    tmp.remove();
  });

  const pod = (name: string, image: string, extra: Obj = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image }], ...extra },
  });
  const createPod = (ns: string, p: Obj) => cp.call('POST', `/api/v1/namespaces/${ns}/pods`, p);

  it('a Windows-image pod without placement is placed by guard: os windows, the RuntimeClass of its build', async () => {
    const asked = cp.egress.asked.length;
    const r = await createPod('team', pod('win', `${open.host}/team/win-app:1`));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const spec = r.body['spec'] as Obj;
    assert.deepEqual(spec['os'], { name: 'windows' });
    assert.equal(spec['runtimeClassName'], 'windows-2022');
    // The RuntimeClass admission plugin then merged the class's scheduling into the pod.
    assert.equal(spec['nodeSelector']['node.kubernetes.io/windows-build'], '10.0.20348');
    assert.ok(
      r.warnings.some((w) => /registry/.test(w)),
      `guard's warning reached the client: ${r.warnings.join(' | ')}`,
    );
    assert.ok(
      cp.egress.asked.slice(asked).some((a) => a.target === `${clusterIp}:443` && a.routed),
      'the API server reached guard through the Service',
    );
  });

  it('a pod that cannot run (an image for Windows Server 2025 on a 2022-only cluster) is refused', async () => {
    const r = await createPod('team', pod('win25', `${open.host}/team/win-2025:1`));
    // A webhook's denial without a code of its own is 403 Forbidden (k8s.io/apiserver webhookerrors).
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.match(String(r.body['message']), /admission webhook "windows\.guard\.kubemix\.io" denied the request/);
    assert.match(String(r.body['message']), /image\/windows-build-mismatch/);
    assert.equal((await cp.call('GET', '/api/v1/namespaces/team/pods/win25')).status, 404);
  });

  it('a Windows pod with a memory-backed emptyDir, which the API server would take, is refused by guard', async () => {
    const r = await createPod(
      'team',
      pod('win-tmpfs', `${open.host}/team/win-app:1`, { volumes: [{ name: 's', emptyDir: { medium: 'Memory' } }] }),
    );
    assert.equal(r.status, 403, JSON.stringify(r.body));
    assert.match(String(r.body['message']), /admission webhook "windows\.guard\.kubemix\.io" denied the request/);
    assert.match(String(r.body['message']), /windows\/memory-emptydir/);
  });

  it('a Windows pod with hostPID: placed by guard, then refused by the API server itself (it validates before validating webhooks)', async () => {
    const r = await createPod('team', pod('win-hostpid', `${open.host}/team/win-app:1`, { hostPID: true }));
    // The order seen in the real-cluster tier (run 32): mutating webhooks, the object's own validation — which
    // knows Windows pods once spec.os.name says so — and only then validating webhooks.
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.match(String(r.body['message']), /spec\.hostPID: Forbidden: cannot be set for a windows pod/);
    assert.ok(
      r.warnings.some((w) => /placed Pod on windows/.test(w)),
      `guard's placement came first: ${r.warnings.join(' | ')}`,
    );
  });

  it("a private image: placed by the registry's answer, read with the pod's pull secret (guard's RBAC)", async () => {
    const auth = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    const secret = await cp.call('POST', '/api/v1/namespaces/team-a/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'regcred' },
      type: 'kubernetes.io/dockerconfigjson',
      data: {
        '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: { [basic.host]: { auth } } })).toString('base64'),
      },
    });
    assert.equal(secret.status, 201);
    const image = `${basic.host}/team/private:alpine`;
    const a = await createPod('team-a', pod('p', image, { imagePullSecrets: [{ name: 'regcred' }] }));
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.deepEqual(a.body['spec']['os'], { name: 'windows' });
    // Without the secret the registry refuses: guard falls back on the name, which says Linux.
    const b = await createPod('team-b', pod('p', image));
    assert.equal(b.status, 201, JSON.stringify(b.body));
    assert.deepEqual(b.body['spec']['os'], { name: 'linux' });
    assert.doesNotMatch(stderr, new RegExp(PASSWORD));
    assert.doesNotMatch(stderr, /kube\.forbidden|kube\.unauthorized/);
  });

  it('guard stopped, failurePolicy Fail: pods are refused, except in kube-system and its own namespace', async () => {
    await stopGuard();
    const r = await createPod('team-c', pod('w', `${open.host}/team/win-app:1`));
    assert.equal(r.status, 500, JSON.stringify(r.body));
    assert.match(String(r.body['message']), /failed calling webhook "placement\.guard\.kubemix\.io"/);
    // Its own namespace enforces Pod Security restricted (guard install): a pod that passes it.
    const restricted = {
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'c',
          image: 'registry.k8s.io/pause:3.10.2',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
        },
      ],
    };
    for (const ns of ['kube-system', NS]) {
      const ok = await createPod(ns, { ...pod('still-admitted', ''), spec: restricted });
      assert.equal(ok.status, 201, `${ns}: ${JSON.stringify(ok.body)}`);
    }
  });

  it('guard stopped, failurePolicy Ignore: pods are admitted as written (unplaced)', async () => {
    await install(join(tmp.dir, 'install-ignore'), 'Ignore');
    const r = await createPod('team-d', pod('w', `${open.host}/team/win-app:1`));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body['spec']['os'], undefined);
    assert.equal(r.body['spec']['runtimeClassName'], undefined);
  });
});
