// Layer 2 against what a real API server does besides answering: list +
// watch (BOOKMARK, ERROR 410 Gone, a role without the watch verb), 429
// TooManyRequests with Retry-After, a namespace an earlier run left
// Terminating (DELETE 409 Conflict, POST 409 AlreadyExists, 403 for content),
// one that never goes, another run's; the host → pod cells where Pod Security
// allows them and the egress cells. All against the loopback stand-in
// (test/helpers/kube-api-standin.ts); no kube-apiserver runs here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kubeconfigTextAccess } from '../src/kube/config.js';
import { KubeError } from '../src/kube/errors.js';
import { clusterExpectations } from '../src/verify/cluster/expect.js';
import { PROBE_NAMESPACE } from '../src/verify/cluster/probes.js';
import { runCluster, type RunClusterOptions } from '../src/verify/cluster/run.js';
import type { CheckResult } from '../src/verify/types.js';
import { kubeconfigFor } from './helpers/fake-apiserver.js';
import { startKubeApiStandin, type KubeApiStandin, type StandinScenario } from './helpers/kube-api-standin.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';
import { deleted, get, healthyScenario, mixedModel, startEcho, TOKEN } from './helpers/verify-cluster-fixture.js';

const e = clusterExpectations(mixedModel());
const names = e.nodes.map((n) => n.name);
const linux = e.nodes.find((n) => n.os === 'linux' && !n.controlPlane)!.name;
const [win1, win2] = e.nodes.filter((n) => n.os === 'windows').map((n) => n.name) as [string, string];
const PODS = `/api/v1/namespaces/${PROBE_NAMESPACE}/pods`;
const failed = (rs: readonly CheckResult[]): string[] =>
  rs
    .filter((r) => r.status === 'fail')
    .map((r) => r.id)
    .sort();
const watches = (api: KubeApiStandin, path: string, role?: string) =>
  api.requests.filter(
    (r) =>
      r.method === 'GET' &&
      r.path === path &&
      r.query.includes('watch=true') &&
      (role === undefined || r.query.includes(`verify%3D${role}`)),
  );
const lists = (api: KubeApiStandin, path: string, role: string) =>
  api.requests.filter(
    (r) => r.method === 'GET' && r.path === path && !r.query.includes('watch=') && r.query.includes(`verify%3D${role}`),
  );
const rvOf = (query: string): number => Number(new URLSearchParams(query).get('resourceVersion'));

describe('verify layer 2: watch, 429, namespaces, host and egress cells (API stand-in)', () => {
  const tmp = scratch('verify-cluster-api');
  let pki: TestPki;
  let nodePort: Awaited<ReturnType<typeof startEcho>>;
  before(async () => {
    pki = makePki(tmp.dir);
    nodePort = await startEcho(...names);
  });
  after(async () => {
    await nodePort?.close();
    tmp.remove();
  });

  const scenario = (s: Partial<StandinScenario>): StandinScenario => ({ ...healthyScenario(e, nodePort.port), ...s });

  async function run(
    s: Partial<StandinScenario>,
    opts: Partial<RunClusterOptions> = {},
    during?: (api: KubeApiStandin) => void,
  ): Promise<{ results: CheckResult[]; api: KubeApiStandin; ms: number }> {
    const api = await startKubeApiStandin(pki.server('apiserver'), scenario(s));
    during?.(api);
    try {
      const access = kubeconfigTextAccess(kubeconfigFor(api.url, pki.caCert, TOKEN), 'stand-in', tmp.dir);
      const started = Date.now();
      const results = await runCluster(e, {
        access,
        signal: new AbortController().signal,
        underlay: [],
        select: () => true,
        startMs: 5000,
        matrixMs: 5000,
        goneMs: 5000,
        pollMs: 20,
        ...opts,
      });
      return { results, api, ms: Date.now() - started };
    } finally {
      await api.close();
    }
  }

  it('waits by watch, not by polling: done long before a poll interval, resuming after the server ends a watch', async () => {
    // pollMs of a minute: were verify polling, it would still be waiting. The server ends every watch after 5 ms
    // with a BOOKMARK: verify watches again from the bookmark's resourceVersion, without listing again. The pods
    // start after 3 s, as in the 410 case below: at 300 ms a list that came late on a loaded machine already saw
    // them running, so no event followed it and every watch began at the list's resourceVersion (a CI run).
    const { results, api, ms } = await run(
      { watch: { closeAfterMs: 5 }, podStartMs: 3000 },
      { pollMs: 60_000, startMs: 30_000, select: (id) => !id.includes('/nodeport/') },
    );
    assert.deepEqual(failed(results), []);
    assert.ok(ms < 20_000, `took ${ms} ms`);
    const echo = watches(api, PODS, 'echo');
    assert.ok(echo.length >= 2, `re-watched after the server ended the watch (${echo.length})`);
    assert.equal(lists(api, PODS, 'echo').length, 1, 'resumed from the bookmark, not relisted');
    const rvs = echo.map((w) => rvOf(w.query));
    assert.ok(
      rvs.every((v, i) => i === 0 || v >= rvs[i - 1]!) && rvs.at(-1)! > rvs[0]!,
      `each watch starts where the last event or bookmark left (${rvs.join(' ')})`,
    );
    assert.ok(echo.every((w) => w.query.includes('allowWatchBookmarks=true')));
  });

  it('ERROR 410 Gone on a watch: lists again and watches from the new resourceVersion', async () => {
    // The pods start late enough that the first list cannot already see them running, even on a loaded
    // machine (at 300 ms a list that came late saw them ready and never watched, so nothing was relisted).
    const { results, api } = await run({ watch: { goneFirst: 1 }, podStartMs: 3000 }, { startMs: 30_000 });
    assert.deepEqual(failed(results), []);
    assert.equal(lists(api, PODS, 'echo').length, 2, 'relisted after 410');
    assert.ok(watches(api, PODS, 'echo').length >= 2);
  });

  it('a role that may not watch (403): falls back to listing every pollMs', async () => {
    const { results, api } = await run({ watch: { forbidden: true }, podStartMs: 300 });
    assert.deepEqual(failed(results), []);
    assert.ok(lists(api, PODS, 'echo').length >= 2);
  });

  it('429 with Retry-After: waits what the server says, then goes on', async () => {
    const seen: { method: string; path: string; at: number }[] = [];
    let throttled = 0;
    const { results } = await run({
      onRequest: (method, path) => seen.push({ method, path, at: Date.now() }),
      throttle: (method, path) => (method === 'POST' && path === PODS && throttled++ < 2 ? '1' : undefined),
    });
    assert.deepEqual(failed(results), []);
    const posts = seen.filter((r) => r.method === 'POST' && r.path === PODS);
    assert.ok(posts[1]!.at - posts[0]!.at >= 950, 'waited Retry-After: 1 before the first retry');
    assert.ok(posts[2]!.at - posts[1]!.at >= 950);
    assert.equal(posts.length, 2 + 4 + 8, 'two refused, then 4 echo pods and 8 probe pods');
  });

  it('429 that never ends: bounded, a KubeError naming HTTP 429 and the tries', async () => {
    const api = await startKubeApiStandin(
      pki.server('apiserver'),
      scenario({ throttle: (m, p) => (p === '/api/v1/nodes' ? '0' : undefined) }),
    );
    try {
      const access = kubeconfigTextAccess(kubeconfigFor(api.url, pki.caCert, TOKEN), 'stand-in', tmp.dir);
      const signal = new AbortController().signal;
      await assert.rejects(
        runCluster(e, { access, signal, underlay: [], select: () => true }),
        (error: unknown) =>
          error instanceof KubeError &&
          /list nodes: HTTP 429: Too many requests.*still refused after 6 tries/.test(error.message),
      );
      assert.equal(api.requests.filter((r) => r.path === '/api/v1/nodes').length, 6);
    } finally {
      await api.close();
    }
  });

  it('an earlier run left the namespace Terminating: DELETE 409 Conflict, verify waits for it to go, then runs', async () => {
    const { results, api } = await run({
      leftoverNamespace: PROBE_NAMESPACE,
      leftoverTerminating: true,
      terminateMs: 2000,
    });
    assert.deepEqual(failed(results), []);
    const i = (pred: (r: KubeApiStandin['requests'][number]) => boolean): number => api.requests.findIndex(pred);
    const del = i((r) => r.method === 'DELETE');
    const watch = i((r) => r.path === '/api/v1/namespaces' && r.query.includes('watch=true'));
    const post = i((r) => r.method === 'POST' && r.path === '/api/v1/namespaces');
    assert.ok(del >= 0 && del < watch && watch < post, `DELETE ${del}, watch ${watch}, POST ${post}`);
    assert.match(api.requests[watch]!.query, /fieldSelector=metadata.name%3Dkubemix-verify/);
    assert.ok(deleted(api, PROBE_NAMESPACE));
  });

  it('a namespace that never goes: a failed namespace check naming the finalizer; nothing created', async () => {
    const { results, api } = await run(
      { leftoverNamespace: PROBE_NAMESPACE, leftoverTerminating: true, stuckNamespace: true },
      { goneMs: 300 },
    );
    const ns = get(results, `cluster/namespace/deployer/${PROBE_NAMESPACE}`);
    assert.equal(ns.status, 'fail');
    assert.match(ns.detail, /still there after 0 s: Terminating; NamespaceFinalizersRemaining: .*example\.com\/never/);
    assert.match(ns.cause ?? '', /kubectl get namespace kubemix-verify -o yaml/);
    assert.deepEqual(failed(results), [`cluster/namespace/deployer/${PROBE_NAMESPACE}`]);
    assert.equal(get(results, `cluster/node/${win1}/ready`).status, 'pass', 'the node cells still come back');
    assert.ok(!api.requests.some((r) => r.method === 'POST'));
  });

  it('POST 409 AlreadyExists for a namespace still Terminating: waits for it, creates it again', async () => {
    let api: KubeApiStandin | undefined;
    let once = true;
    const { results } = await run(
      {
        // Another client recreates and deletes the namespace between our wait and our POST.
        onRequest: (method, path) => {
          if (method === 'POST' && path === '/api/v1/namespaces' && once && api !== undefined) {
            once = false;
            api.seedNamespace(PROBE_NAMESPACE, 'terminating');
          }
        },
        terminateMs: 500,
      },
      {},
      (a) => (api = a),
    );
    assert.deepEqual(failed(results), []);
    assert.equal(api!.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/namespaces').length, 2);
  });

  it("POST 409 for an Active namespace (another run's): a failed check, and that namespace is left alone", async () => {
    let api: KubeApiStandin | undefined;
    const { results } = await run(
      {
        onRequest: (method, path) => {
          if (method === 'POST' && path === '/api/v1/namespaces') api?.seedNamespace(PROBE_NAMESPACE, 'active');
        },
      },
      {},
      (a) => (api = a),
    );
    const ns = get(results, `cluster/namespace/deployer/${PROBE_NAMESPACE}`);
    assert.match(ns.detail, /already exists \(Active\), although this run deleted it: is another kubemix verify/);
    const lastDelete = api!.requests.findLastIndex((r) => r.method === 'DELETE');
    const post = api!.requests.findIndex((r) => r.method === 'POST' && r.path === '/api/v1/namespaces');
    assert.ok(lastDelete < post, 'no DELETE after the refused POST');
    assert.equal(api!.namespaces.get(PROBE_NAMESPACE)?.['metadata'].deletionTimestamp, undefined, 'not deleted');
  });

  it('host → pod from hostNetwork (Linux) and HostProcess (Windows) pods, in a privileged namespace', async () => {
    const { results, api } = await run({});
    for (const s of names)
      for (const t of names) assert.equal(get(results, `cluster/host-pod/${s}/${t}`).status, 'pass');
    const ns = api.posted.find((x) => x.path === '/api/v1/namespaces')!.body;
    assert.equal(ns['metadata'].labels['pod-security.kubernetes.io/enforce'], 'privileged');
    const pod = (name: string) => api.posted.find((x) => x.path === PODS && x.body['metadata'].name === name)!.body;
    assert.equal(pod(`host-${linux}`)['spec'].hostNetwork, true);
    assert.equal(pod(`probe-${linux}`)['spec'].hostNetwork, undefined);
    const winHost = pod(`host-${win1}`);
    assert.deepEqual(winHost['spec'].securityContext, {
      windowsOptions: { hostProcess: true, runAsUserName: 'NT AUTHORITY\\SYSTEM' },
    });
    assert.equal(winHost['spec'].hostNetwork, true);
  });

  it('host → pod where Pod Security enforces baseline: skipped with the reason, no host pod tried', async () => {
    const { results, api } = await run({ forcePodSecurity: 'baseline' });
    const r = get(results, `cluster/host-pod/${win1}/${linux}`);
    assert.equal(r.status, 'skip');
    assert.match(r.detail, /enforced at Pod Security level baseline: hostNetwork and HostProcess pods need privileged/);
    assert.ok(results.filter((x) => x.probe === 'host-pod').every((x) => x.status === 'skip'));
    assert.ok(!api.posted.some((x) => x.path === PODS && x.body['metadata'].name.startsWith('host-')));
    assert.deepEqual(failed(results), []);
  });

  it('a policy that refuses HostProcess (403): the Windows host cells skip naming it, Linux host cells run', async () => {
    const { results } = await run({
      forbidPod: (pod) =>
        pod['spec']?.securityContext?.windowsOptions?.hostProcess === true
          ? 'HostProcess containers are not allowed'
          : undefined,
    });
    const w = get(results, `cluster/host-pod/${win1}/${linux}`);
    assert.equal(w.status, 'skip');
    assert.match(
      w.detail,
      /refused the pod: pods "host-compute-01" is forbidden: HostProcess containers are not allowed/,
    );
    assert.equal(get(results, `cluster/host-pod/${linux}/${win1}`).status, 'pass');
    assert.deepEqual(failed(results), []);
  });

  it('--skip host-pod: the namespace is not asked to be privileged', async () => {
    const { api } = await run({}, { select: (id) => !id.includes('/host-pod/') });
    const ns = api.posted.find((x) => x.path === '/api/v1/namespaces')!.body;
    assert.deepEqual(ns['metadata'].labels, { 'kubemix.dev/verify': 'true' });
    assert.ok(!api.posted.some((x) => x.path === PODS && x.body['metadata'].name.startsWith('host-')));
  });

  it('egress only when asked; from every node of both OSes; one failing cell alone, with its cause', async () => {
    const none = await run({});
    assert.ok(!none.results.some((r) => r.probe === 'egress'), 'no egress cell unless asked');
    const target = 'example.org:443';
    const { results } = await run(
      {
        cell: (id) =>
          id === `cluster/egress/${win2}/${target}` ? { ok: false, output: 'no connection in 3 s' } : undefined,
      },
      { egress: [target] },
    );
    for (const n of names) assert.ok(results.some((r) => r.id === `cluster/egress/${n}/${target}`));
    assert.deepEqual(failed(results), [`cluster/egress/${win2}/${target}`]);
    const r = get(results, `cluster/egress/${win2}/${target}`);
    assert.match(r.cause ?? '', /egress from Windows pods: the HNS network's outbound NAT/);
    assert.equal(get(results, `cluster/egress/${linux}/${target}`).detail, 'first try, held 3');
  });

  it('Ctrl-C while waiting for the probe pods: returns at once (the watch is closed), the namespace is deleted', async () => {
    const ac = new AbortController();
    let api: KubeApiStandin | undefined;
    const { results, ms } = await run(
      {
        echoNotReady: [win1],
        onRequest: (method, path) => {
          if (method === 'GET' && path === PODS) setTimeout(() => ac.abort(), 100);
        },
      },
      { signal: ac.signal, startMs: 60_000, matrixMs: 60_000 },
      (a) => (api = a),
    );
    assert.ok(ms < 5000, `took ${ms} ms`);
    assert.ok(!results.some((r) => r.probe === 'pod-ip'));
    assert.ok(deleted(api!, PROBE_NAMESPACE));
    assert.ok(api!.requests.some((r) => r.method === 'DELETE' && r.path === `/api/v1/namespaces/${PROBE_NAMESPACE}`));
  });
});
