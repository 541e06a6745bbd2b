// Layer 2 of `kubemix verify` against a stand-in API server on loopback
// (test/helpers/kube-api-standin.ts): @kubernetes/client-node over HTTPS to
// it, the probe pods' lifecycle played by the stand-in, failures injected.
// No kube-apiserver runs here: this proves the requests, the judgement and
// the cleanup, not a real cluster's behaviour.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { kubeconfigTextAccess } from '../src/kube/config.js';
import { clusterExpectations } from '../src/verify/cluster/expect.js';
import { PROBE_NAMESPACE } from '../src/verify/cluster/probes.js';
import { DEMO_MARK, DEMO_NAMESPACE } from '../src/verify/cluster/demo.js';
import { runCluster, type RunClusterOptions } from '../src/verify/cluster/run.js';
import { matrixText, summarize } from '../src/verify/report.js';
import type { CheckResult } from '../src/verify/types.js';
import { kubeconfigFor } from './helpers/fake-apiserver.js';
import { startKubeApiStandin, type StandinScenario } from './helpers/kube-api-standin.js';
import {
  deleted,
  get,
  mixedModel,
  mixedSpec,
  nodeObject,
  systemPods,
  TOKEN,
  healthyScenario,
  startEcho,
} from './helpers/verify-cluster-fixture.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

describe('verify layer 2 against the API stand-in', () => {
  const tmp = scratch('verify-cluster');
  let pki: TestPki;
  let echo: Awaited<ReturnType<typeof startEcho>>;
  const model = mixedModel();
  const e = clusterExpectations(model);
  const names = e.nodes.map((n) => n.name);
  const linux = e.nodes.filter((n) => n.os === 'linux' && !n.controlPlane)[0]!.name;
  const cp = e.nodes.find((n) => n.controlPlane)!.name;
  const [win1, win2] = e.nodes.filter((n) => n.os === 'windows').map((n) => n.name) as [string, string];

  before(async () => {
    pki = makePki(tmp.dir);
    echo = await startEcho(...names);
  });
  after(async () => {
    await echo?.close();
    tmp.remove();
  });

  async function run(
    scenario: Partial<StandinScenario>,
    opts: Partial<RunClusterOptions> = {},
    token = TOKEN,
  ): Promise<{ results: CheckResult[]; api: Awaited<ReturnType<typeof startKubeApiStandin>> }> {
    const api = await startKubeApiStandin(pki.server('apiserver'), { ...healthyScenario(e, echo.port), ...scenario });
    try {
      const access = kubeconfigTextAccess(kubeconfigFor(api.url, pki.caCert, token), 'stand-in kubeconfig', tmp.dir);
      const results = await runCluster(e, {
        access,
        signal: new AbortController().signal,
        underlay: [],
        select: () => true,
        startMs: 5000,
        matrixMs: 5000,
        pollMs: 20,
        ...opts,
      });
      return { results, api };
    } finally {
      await api.close();
    }
  }

  it('a healthy mixed cluster: every cell passes, the probe namespace is removed', async () => {
    const { results, api } = await run({});
    const failed = results.filter((r) => r.status === 'fail');
    assert.deepEqual(failed, []);
    assert.equal(get(results, `cluster/node/${win1}/windows-build`).detail, '10.0.20348');
    for (const s of names) for (const t of names) assert.equal(get(results, `cluster/pod-ip/${s}/${t}`).status, 'pass');
    for (const s of names)
      for (const svc of ['svc-linux', 'svc-windows', 'svc-mixed']) {
        assert.equal(get(results, `cluster/svc-ip/${s}/${svc}`).status, 'pass');
        assert.equal(get(results, `cluster/svc-dns/${s}/${svc}`).status, 'pass');
      }
    assert.equal(get(results, `cluster/pod-dns/${win1}/kubernetes.default`).status, 'pass');
    assert.equal(get(results, `cluster/nodeport/deployer/${linux}`).status, 'pass');
    assert.equal(get(results, `cluster/runtimeclass/cluster/windows-2022`).status, 'pass');
    assert.ok(deleted(api, PROBE_NAMESPACE));
    assert.ok(api.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${PROBE_NAMESPACE}`));
    const text = matrixText(results, names);
    assert.match(text, /cluster: pod → pod by IP/);
    assert.match(text, new RegExp(`${summarize(results).passed} checks passed, 0 failed`));
  });

  it('names a NotReady node, a wrong windows-build, a missing kube-proxy and the one failing cell', async () => {
    const nodes = e.nodes.map(nodeObject);
    const n2 = nodes.find((n) => n.metadata.name === win2)!;
    n2.status.conditions = [
      { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'network plugin not ready' },
    ];
    nodes.find((n) => n.metadata.name === win1)!.metadata.labels['node.kubernetes.io/windows-build'] = '10.0.17763';
    const pods = systemPods(e).filter((p) => p.metadata.name !== `kube-proxy-windows-${win1}`);
    const underlay: CheckResult[] = [
      {
        id: `underlay/udp-4789/${win1}/${cp}`,
        layer: 'underlay',
        probe: 'udp-4789',
        source: win1,
        target: cp,
        status: 'fail',
        detail: 'no datagram arrived',
      },
    ];
    const { results, api } = await run(
      {
        nodes,
        systemPods: pods,
        leftoverNamespace: PROBE_NAMESPACE,
        cell: (id) =>
          id === `cluster/pod-ip/${win1}/${linux}` || id === `cluster/pod-ip/${win1}/${cp}`
            ? { ok: false, output: 'Unable to connect to the remote server' }
            : undefined,
      },
      { underlay },
    );
    const ready = get(results, `cluster/node/${win2}/ready`);
    assert.equal(ready.status, 'fail');
    assert.match(ready.detail, /not Ready \(False: KubeletNotReady — network plugin not ready\)/);
    assert.equal(get(results, `cluster/pod-ip/${win2}/*`).status, 'skip');
    assert.ok(!results.some((r) => r.probe === 'pod-ip' && r.target === win2 && r.status !== 'skip'));
    const build = get(results, `cluster/node/${win1}/windows-build`);
    assert.equal(build.status, 'fail');
    assert.match(build.detail, /is 10\.0\.17763, planned 10\.0\.20348/);
    const proxy = get(results, `cluster/system-pods/${win1}/kube-proxy`);
    assert.equal(proxy.status, 'fail');
    assert.match(proxy.detail, /no pod of DaemonSet kube-system\/kube-proxy-windows/);
    const cell = get(results, `cluster/pod-ip/${win1}/${linux}`);
    assert.equal(cell.status, 'fail');
    assert.equal(cell.output, 'Unable to connect to the remote server');
    assert.match(cell.cause ?? '', /Windows↔Linux overlay: VNI/);
    assert.match(
      get(results, `cluster/pod-ip/${win1}/${cp}`).cause ?? '',
      /layer 1 already failed here: underlay udp-4789/,
    );
    assert.equal(get(results, `cluster/pod-ip/${linux}/${win1}`).status, 'pass');
    assert.equal(get(results, `cluster/svc-ip/${win1}/svc-linux`).status, 'pass');
    const failed = results
      .filter((r) => r.status === 'fail')
      .map((r) => r.id)
      .sort();
    assert.deepEqual(
      failed,
      [
        `cluster/node/${win2}/ready`,
        `cluster/node/${win1}/windows-build`,
        `cluster/system-pods/${win1}/kube-proxy`,
        `cluster/pod-ip/${win1}/${linux}`,
        `cluster/pod-ip/${win1}/${cp}`,
      ].sort(),
    );
    // The crashed run's namespace went first, then ours at the end.
    const del = api.requests.findIndex((r) => r.method === 'DELETE');
    const create = api.requests.findIndex((r) => r.method === 'POST' && r.path === '/api/v1/namespaces');
    assert.ok(del >= 0 && del < create);
    assert.ok(deleted(api, PROBE_NAMESPACE));
    const text = matrixText(results, names);
    if (process.env['SHOW_MATRIX'] === '1') process.stdout.write(text);
    assert.match(text, new RegExp(`✗ cluster pod-ip ${win1} → ${linux}: never succeeded`));
    assert.match(text, /likely cause: Windows↔Linux overlay/);
  });

  it('an echo pod that never starts fails the cells into it, naming the image and build', async () => {
    const { results } = await run({ echoNotReady: [win2] });
    const r = get(results, `cluster/pod-ip/${linux}/${win2}`);
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /echo pod on .* is not Ready \(Pending: ErrImagePull: no matching manifest\)/);
    assert.match(r.cause ?? '', /servercore:ltsc2022 must match the node's build/);
  });

  it('Ctrl-C mid-run: the probe namespace is deleted', async () => {
    const ac = new AbortController();
    const { results, api } = await run(
      {
        onRequest: (method, path) => {
          if (method === 'POST' && path.endsWith('/pods') && path.includes(PROBE_NAMESPACE)) ac.abort();
        },
      },
      { signal: ac.signal },
    );
    assert.ok(!results.some((r) => r.probe === 'pod-ip' && r.status === 'pass'));
    assert.ok(deleted(api, PROBE_NAMESPACE));
    assert.ok(api.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${PROBE_NAMESPACE}`));
  });

  it('--only: cells left out are neither probed nor reported, and the run does not wait for them', async () => {
    const only = new RegExp(`^cluster/pod-ip/${win1}/`);
    const started = Date.now();
    const { results, api } = await run({}, { select: (id) => only.test(id), startMs: 4000, matrixMs: 4000 });
    assert.ok(Date.now() - started < 3000, 'finished before the deadlines');
    assert.deepEqual(results.map((r) => r.id).sort(), names.map((t) => `cluster/pod-ip/${win1}/${t}`).sort());
    assert.ok(results.every((r) => r.status === 'pass'));
    const probePods = api.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pods')).length;
    assert.equal(probePods, names.length + 1, 'an echo pod per node and one probe pod');
  });

  it('refused credentials are a KubeError naming HTTP 401', async () => {
    await assert.rejects(run({}, {}, 'wrong-token'), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'kube.unauthorized');
      assert.match(error.message, /HTTP 401/);
      assert.ok(!error.message.includes('wrong-token'));
      return true;
    });
  });

  it('kubemix verify --kubeconfig: the matrix, --junit valid against the JUnit XSD, exit 0; bad files exit 2', async () => {
    const api = await startKubeApiStandin(pki.server('apiserver'), healthyScenario(e, echo.port));
    try {
      const spec = join(tmp.dir, 'mixed.yaml');
      writeFileSync(spec, mixedSpec());
      const kc = join(tmp.dir, 'kubeconfig');
      writeFileSync(kc, kubeconfigFor(api.url, pki.caCert, TOKEN), { mode: 0o600 });
      const junit = join(tmp.dir, 'verify.xml');
      const state = join(tmp.dir, 'state');
      const args = ['verify', spec, '--state-dir', state, '--only', '^cluster/'];
      const egress = `127.0.0.1:${echo.port}`;
      const ok = await runCli([...args, '--kubeconfig', kc, '--junit', junit, '--egress', egress]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /cluster: pod → pod by IP/);
      assert.match(ok.stdout, /cluster: host → pod by IP \(a hostNetwork pod on Linux, a HostProcess pod on Windows\)/);
      assert.match(ok.stdout, new RegExp(`cluster: egress: TCP connect .*\\n +${egress.replace(/\./g, '\\.')}`));
      for (const [flag, value, says] of [
        ['--egress', 'example.org', /flags\.egress: --egress "example.org": give HOST:PORT/],
        ['--probe-image', 'linux=busybox@sha256:0', /--probe-image "linux=busybox@sha256:0": not an image reference/],
        ['--probe-image', 'ltsc2016=x', /unknown key ltsc2016/],
      ] as const) {
        const bad = await runCli([...args, '--kubeconfig', kc, flag, value]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, says);
        assert.ok(!hasStackTrace(bad.stderr));
      }
      assert.match(ok.stdout, /\d+ checks passed, 0 failed, 0 skipped/);
      assert.ok(!ok.stdout.includes(TOKEN) && !ok.stderr.includes(TOKEN));
      execFileSync('xmllint', ['--noout', '--schema', repoPath('test', 'fixtures', 'junit-10.xsd'), junit], {
        stdio: 'pipe',
      });
      assert.match(readFileSync(junit, 'utf8'), /classname="cluster.pod-ip"/);
      assert.ok(deleted(api, PROBE_NAMESPACE));
      const missing = await runCli([...args, '--kubeconfig', join(tmp.dir, 'nope.yaml')]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /nope\.yaml: cannot read it \(ENOENT\)/);
      assert.ok(!hasStackTrace(missing.stderr));
      writeFileSync(join(tmp.dir, 'bad.yaml'), 'clusters: [\n');
      const bad = await runCli([...args, '--kubeconfig', join(tmp.dir, 'bad.yaml')]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /bad\.yaml: cannot read it \(not YAML\)/);
      const none = await runCli([...args, '--installed']);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /no admin kubeconfig in .*state/);
    } finally {
      await api.close();
    }
  });

  it('spec.verify.podStartTimeout: verify waits that long for its probe pods, not its default 5 minutes', async () => {
    assert.equal(e.podStartMs, 300_000, 'the default');
    const api = await startKubeApiStandin(pki.server('apiserver'), {
      ...healthyScenario(e, echo.port),
      echoNotReady: [win2],
    });
    try {
      const spec = join(tmp.dir, 'slow.yaml');
      writeFileSync(spec, mixedSpec().replace('  services:\n', '  verify:\n    podStartTimeout: 3s\n  services:\n'));
      const kc = join(tmp.dir, 'kubeconfig-slow');
      writeFileSync(kc, kubeconfigFor(api.url, pki.caCert, TOKEN), { mode: 0o600 });
      const started = Date.now();
      const r = await runCli([
        'verify',
        spec,
        '--state-dir',
        join(tmp.dir, 'slow'),
        '--only',
        '^cluster/',
        '--kubeconfig',
        kc,
      ]);
      const seconds = (Date.now() - started) / 1000;
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stdout, new RegExp(`echo pod on ${win2} is not Ready`));
      assert.ok(seconds < 120, `verify gave up on the echo pod after ${seconds} s, not 3 s`);
      for (const [value, says] of [
        ['90sec', /spec\.verify\.podStartTimeout.*must be a duration such as 90s, 10m or 1h/],
        ['25h', /spec\.verify\.podStartTimeout.*must be at most 24h/],
      ] as const) {
        writeFileSync(
          spec,
          mixedSpec().replace('  services:\n', `  verify:\n    podStartTimeout: ${value}\n  services:\n`),
        );
        const bad = await runCli(['verify', spec, '--state-dir', join(tmp.dir, 'slow'), '--kubeconfig', kc]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, says);
      }
    } finally {
      await api.close();
    }
  });

  it('kubemix verify --demo: IIS answers through the front end NodePort; removed, or kept with --keep', async () => {
    // The stand-in plays the pods; the NodePort is a loopback server answering as nginx would with IIS's page.
    const page = createServer((_, res) => res.end(`${DEMO_MARK} (iis-7d9f-x1)\n`));
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    const pagePort = (page.address() as { port: number }).port;
    const scenario = healthyScenario(e, pagePort);
    const spec = join(tmp.dir, 'mixed.yaml');
    writeFileSync(spec, mixedSpec());
    const args = (kc: string): string[] => ['verify', spec, '--state-dir', join(tmp.dir, 'state'), '--kubeconfig', kc];
    try {
      for (const keep of [false, true]) {
        const api = await startKubeApiStandin(pki.server('apiserver'), scenario);
        try {
          const kc = join(tmp.dir, 'kc-demo');
          writeFileSync(kc, kubeconfigFor(api.url, pki.caCert, TOKEN), { mode: 0o600 });
          const r = await runCli([...args(kc), '--demo', ...(keep ? ['--keep'] : [])]);
          assert.equal(r.code, 0, r.stderr);
          assert.match(r.stdout, new RegExp(`✓ answered: ${DEMO_MARK} \\(iis-7d9f-x1\\)`));
          assert.equal(!deleted(api, DEMO_NAMESPACE), keep);
          const kinds = api.requests.filter((q) => q.method === 'POST').map((q) => q.path.split('/').pop());
          assert.deepEqual(kinds, ['namespaces', 'configmaps', 'deployments', 'services', 'deployments', 'services']);
        } finally {
          await api.close();
        }
      }
      const api = await startKubeApiStandin(pki.server('apiserver'), {
        ...scenario,
        deploymentsNotReady: ['iis'],
        nodePort: echo.port,
      });
      try {
        const kc = join(tmp.dir, 'kc-demo');
        writeFileSync(kc, kubeconfigFor(api.url, pki.caCert, TOKEN), { mode: 0o600 });
        const { runDemo } = await import('../src/verify/cluster/demo-run.js');
        const access = kubeconfigTextAccess(kubeconfigFor(api.url, pki.caCert, TOKEN), 'kc', tmp.dir);
        const r = await runDemo(e, {
          access,
          signal: new AbortController().signal,
          keep: false,
          startMs: 500,
          pollMs: 50,
        });
        assert.equal(r.ok, false);
        assert.match(r.answer, /not Ready: iis-7d9f-x1 Pending: ImagePullBackOff/);
        assert.ok(deleted(api, DEMO_NAMESPACE));
      } finally {
        await api.close();
      }
      const keepAlone = await runCli([...args('x'), '--keep']);
      assert.equal(keepAlone.code, 2);
      assert.match(keepAlone.stderr, /--keep only goes with --demo/);
    } finally {
      await new Promise((r) => page.close(r));
    }
  });
});
