// The webhook over HTTPS with real AdmissionReview v1 requests: the returned
// JSON Patch is applied (fast-json-patch) and the result checked; malformed
// requests get 400s; the CLI process drains and exits on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fastJsonPatch from 'fast-json-patch';
import { createGuardServer, KEEP_ALIVE_MS, type GuardServer } from '../src/guard/server.js';
import { lintClusterFor } from '../src/lint/cluster.js';
import { chainResolvers, heuristicResolver, staticResolver } from '../src/lint/image-os.js';
import { freePort } from './helpers/docker-registry.js';
import { makePki } from './helpers/pki.js';
import { repoPath, runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

type Obj = Record<string, any>;
const tmp = scratch('guard-serve');
let ca = '';
let guard: GuardServer;
let port = 0;
const logs: Record<string, unknown>[] = [];

function post(
  path: string,
  body: string | Buffer,
  method = 'POST',
): Promise<{ status: number; json: Obj | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: Obj | undefined;
          try {
            json = JSON.parse(text) as Obj;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const review = (object: Obj, uid = 'u-1') =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: object['apiVersion'] === 'v1' ? '' : 'apps', version: 'v1', kind: object['kind'] },
      operation: 'CREATE',
      namespace: 'default',
      object,
    },
  });

async function mutated(object: Obj): Promise<{ result: Obj; patch: Obj[] }> {
  const res = await post('/mutate', review(object));
  assert.equal(res.status, 200, res.text);
  const response = res.json?.['response'] as Obj;
  assert.equal(response['uid'], 'u-1');
  assert.equal(response['allowed'], true);
  const patch =
    response['patch'] === undefined ? [] : (JSON.parse(Buffer.from(response['patch'], 'base64').toString()) as Obj[]);
  if (patch.length > 0) assert.equal(response['patchType'], 'JSONPatch');
  const result = fastJsonPatch.applyPatch(
    structuredClone(object),
    patch as fastJsonPatch.Operation[],
    true,
    false,
  ).newDocument;
  return { result, patch };
}

const deployment = (spec: Obj): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec },
  },
});

before(async () => {
  const pki = makePki(tmp.dir);
  ca = pki.caCert;
  const tls = pki.server('guard');
  // "registry" answers for one image whose name says nothing; heuristics for the rest.
  const resolver = chainResolvers(
    staticResolver({ 'example.com/team/win-api:1': { os: 'windows', osVersion: '10.0.20348' } }, 'registry'),
    heuristicResolver,
  );
  guard = createGuardServer({
    cert: readFileSync(tls.cert, 'utf8'),
    key: readFileSync(tls.key, 'utf8'),
    resolver,
    cluster: lintClusterFor(['windows-2022']),
    log: (l) => void logs.push(l),
    maxBodyBytes: 64 * 1024,
  });
  port = await guard.listen('127.0.0.1', 0);
});

after(async () => {
  await guard.close();
  tmp.remove();
});

describe('/mutate', () => {
  it('a Linux Deployment without placement gets spec.os.name and the nodeSelector, nothing else changes', async () => {
    const object = deployment({ containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] });
    const { result } = await mutated(object);
    const spec = result['spec']['template']['spec'];
    assert.deepEqual(spec['os'], { name: 'linux' });
    assert.deepEqual(spec['nodeSelector'], { 'kubernetes.io/os': 'linux' });
    delete spec['os'];
    delete spec['nodeSelector'];
    assert.deepEqual(result, object);
  });

  it('escapes kubernetes.io/os as kubernetes.io~1os when a nodeSelector exists', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { nodeSelector: { disktype: 'ssd' }, containers: [{ name: 'c', image: 'redis:7' }] },
    };
    const { result, patch } = await mutated(object);
    assert.ok(
      patch.some((op) => op['path'] === '/spec/nodeSelector/kubernetes.io~1os'),
      JSON.stringify(patch),
    );
    assert.deepEqual(result['spec']['nodeSelector'], { disktype: 'ssd', 'kubernetes.io/os': 'linux' });
  });

  it('a Windows image (from the registry) gets the RuntimeClass of its build', async () => {
    const object = deployment({
      tolerations: [{ key: 'x', operator: 'Exists' }],
      containers: [{ name: 'api', image: 'example.com/team/win-api:1' }],
    });
    const { result } = await mutated(object);
    const spec = result['spec']['template']['spec'];
    assert.equal(spec['runtimeClassName'], 'windows-2022');
    assert.deepEqual(spec['os'], { name: 'windows' });
    assert.deepEqual(spec['tolerations'], [{ key: 'x', operator: 'Exists' }]);
  });

  it('placed pods are left alone (no patch)', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        os: { name: 'linux' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        containers: [{ name: 'c', image: 'nginx' }],
      },
    };
    assert.deepEqual((await mutated(object)).patch, []);
  });
});

describe('/validate', () => {
  it("denies a Windows pod with hostPID, with lint's rule and message", async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'w' },
      spec: {
        os: { name: 'windows' },
        runtimeClassName: 'windows-2022',
        hostPID: true,
        containers: [{ name: 'c', image: 'mcr.microsoft.com/windows/servercore:ltsc2022' }],
      },
    };
    const res = await post('/validate', review(object));
    assert.equal(res.status, 200);
    const response = res.json?.['response'] as Obj;
    assert.equal(response['allowed'], false);
    assert.match(response['status']['message'], /windows\/host-namespaces/);
  });

  it('allows a right Linux pod', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'l' },
      spec: {
        os: { name: 'linux' },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        hostPID: true,
        containers: [{ name: 'c', image: 'nginx' }],
      },
    };
    assert.equal((await post('/validate', review(object))).json?.['response']['allowed'], true);
  });
});

describe('malformed and other requests', () => {
  it('400 for bodies that are not AdmissionReviews, 413 for large ones, 405 and 404', async () => {
    assert.equal((await post('/mutate', '{not json')).status, 400);
    assert.equal((await post('/validate', JSON.stringify({ apiVersion: 'v1', kind: 'Pod' }))).status, 400);
    assert.equal(
      (
        await post(
          '/mutate',
          JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { object: 3 } }),
        )
      ).status,
      400,
    );
    assert.equal(
      (
        await post(
          '/mutate',
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            request: { uid: 'x', object: [] },
          }),
        )
      ).status,
      400,
    );
    assert.equal((await post('/mutate', Buffer.alloc(100 * 1024, 0x20))).status, 413);
    assert.equal((await post('/mutate', '', 'GET')).status, 405);
    assert.equal((await post('/nope', '')).status, 404);
    // Still serving after all that.
    assert.equal((await post('/healthz', '', 'GET')).text, 'ok\n');
  });

  it('answers every call on a keep-alive connection, the next one sent before the last answer is done', async () => {
    // The API server keeps its connection to a webhook open and calls again as soon as an answer arrives; a
    // response whose predecessor was still being written was dropped, and the call ran out of time. Two
    // requests in one write make that overlap certain.
    const body = review(deployment({ containers: [{ name: 'c', image: 'nginx' }] }));
    const call = (path: string) =>
      `POST ${path} HTTP/1.1\r\nHost: guard\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    let answers = '';
    const both = new Promise<void>((resolve, reject) => {
      const limit = setTimeout(() => reject(new Error(`two answers not back within 5 s:\n${answers}`)), 5_000);
      socket.on('data', (c: Buffer) => {
        answers += c.toString();
        if ((answers.match(/"uid":"u-1"/g) ?? []).length === 2) {
          clearTimeout(limit);
          resolve();
        }
      });
      socket.on('error', reject);
    });
    await new Promise<void>((r) => socket.once('secureConnect', () => r()));
    socket.write(call('/mutate') + call('/validate'));
    try {
      await both;
    } finally {
      socket.destroy();
    }
    assert.equal((answers.match(/HTTP\/1\.1 200 /g) ?? []).length, 2, answers);
  });

  it('keeps an idle connection open longer than the API server does (90 s), not Node’s 5 s', async () => {
    assert.ok(KEEP_ALIVE_MS > 90_000);
    assert.equal(guard.server.keepAliveTimeout, KEEP_ALIVE_MS);
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    let text = '';
    socket.on('data', (c: Buffer) => void (text += c.toString()));
    const closed = new Promise<string>((r) => socket.once('close', () => r('closed')));
    await new Promise<void>((r) => socket.once('secureConnect', () => r()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: guard\r\n\r\n');
    // Past Node's default keep-alive timeout of 5 s, and its 1 s check of idle connections.
    const idle = await Promise.race([closed, new Promise<string>((r) => setTimeout(() => r('open'), 7_000))]);
    socket.destroy();
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.equal(idle, 'open', 'the connection was closed while idle');
  });

  it('/metrics in Prometheus text format, logs as JSON objects without the object', async () => {
    const res = await post('/metrics', '', 'GET');
    assert.match(res.text, /^# TYPE kubemix_guard_requests_total counter$/m);
    assert.match(res.text, /^kubemix_guard_requests_total\{route="\/mutate",code="200"\} \d+$/m);
    assert.match(res.text, /^kubemix_guard_request_duration_seconds_bucket\{route="\/mutate",le="\+Inf"\} \d+$/m);
    assert.ok(logs.some((l) => l['route'] === '/mutate' && l['status'] === 200));
    assert.ok(!JSON.stringify(logs).includes('nginx'));
  });
});

/**
 * `kubemix guard serve ARGS` as a process on a free loopback port, `work` run with `post` aimed at it; then
 * SIGTERM, which must end it with exit 0. Returns everything it logged.
 */
async function withGuardCli(args: readonly string[], work: (logged: () => string) => Promise<void>): Promise<string> {
  const pkiDir = scratch('guard-cli');
  const pki = makePki(pkiDir.dir);
  const tls = pki.server('cli');
  const cliPort = await freePort();
  const argv = [
    `${repoPath()}/bin/kubemix.js`,
    'guard',
    'serve',
    '--listen',
    `127.0.0.1:${cliPort}`,
    '--tls-cert',
    tls.cert,
    '--tls-key',
    tls.key,
    '--cache-dir',
    `${pkiDir.dir}/cli-cache`,
    ...args,
  ];
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const saved = { port, ca };
  try {
    for (let i = 0; i < 100 && !stderr.includes('"listening"'); i += 1) await new Promise((r) => setTimeout(r, 100));
    assert.match(stderr, /"msg":"listening"/);
    port = cliPort;
    ca = pki.caCert;
    await work(() => stderr);
  } finally {
    ({ port, ca } = saved);
    const exited = new Promise<number | null>((r) =>
      child.exitCode !== null ? r(child.exitCode) : child.once('exit', (code) => r(code)),
    );
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGTERM');
    // A webhook's pod has 30 s between SIGTERM and SIGKILL; draining idle connections takes milliseconds.
    const late = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS);
    const code = await exited;
    clearTimeout(late);
    pkiDir.remove();
    assert.equal(code, 0, `guard serve did not exit 0 within ${EXIT_WITHIN_MS} ms of SIGTERM:\n${stderr}`);
  }
  return stderr;
}
const EXIT_WITHIN_MS = 5_000;

it('kubemix guard serve: listens, answers, drains and exits 0 on SIGTERM', async () => {
  const stderr = await withGuardCli(['--cluster', 'k8s-libvirt-1-1-1', '--offline'], async () => {
    const res = await post('/mutate', review(deployment({ containers: [{ name: 'c', image: 'nginx' }] })));
    assert.equal(res.json?.['response']['allowed'], true);
  });
  for (const line of stderr.trim().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.match(stderr, /"msg":"stopped"/);
});

it('kubemix guard serve: a registry that never answers costs a decision 3 s once, not a refused pod, nor a late exit', async () => {
  // Accepts and never says a word: an air-gapped cluster's view of a registry behind a dropping firewall.
  const sockets = new Set<Socket>();
  const silent = createNetServer((s) => void sockets.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const spec = `${tmp.dir}/windows-worker.yaml`;
  const init = await runCli([
    'init',
    'k8s-libvirt-1-1-1',
    '--nodes',
    '[[when_group=compute_nodes,os=windows]]',
    '--out',
    spec,
  ]);
  assert.equal(init.code, 0, init.stderr);
  try {
    // 20 s per request: longer than a decision's 9 s, so without a limit of its own the first decision is a 503;
    // and the lookup still running at SIGTERM must not hold the process for the rest of those 20 s.
    await withGuardCli(['--cluster', spec, '--registry-timeout', '20'], async (logged) => {
      const pod = (image: string): Obj => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'default' },
        spec: { containers: [{ name: 'c', image }] },
      });
      let started = Date.now();
      const first = await mutated(pod(`${host}/windows/servercore:ltsc2022`));
      const firstMs = Date.now() - started;
      assert.ok(firstMs >= 2_900 && firstMs < 8_000, `${firstMs} ms`);
      assert.deepEqual(first.result['spec']['os'], { name: 'windows' }, JSON.stringify(first.patch));
      assert.match(logged(), /no registry answer within 3 s; the cache or the image name decides.*registry\.slow/);
      // While that lookup is overdue, the next image is not waited for.
      started = Date.now();
      const second = await mutated(pod(`${host}/windows/nanoserver:ltsc2022`));
      assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
      assert.deepEqual(second.result['spec']['os'], { name: 'windows' });
    });
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});
