// `kubemix up SPEC` ends with `kubemix verify`: an `existing` spec on sshd
// test hosts whose journal already records every task done (so up skips
// them all without touching a host, as on a re-run after a finished deploy),
// the admin kubeconfig in the secret store pointing at the API stand-in.
// Then up must run both verify layers: the underlay over SSH to the test
// hosts, the cluster through the stand-in; `--skip-verify` must not. No
// kubeadm runs here: the deploy is taken as done, only the hook is proven.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { Journal } from '../src/exec/journal.js';
import { taskInputHash } from '../src/exec/hash.js';
import { SecretStore } from '../src/exec/secrets.js';
import { prepareStateDir } from '../src/exec/state-dir.js';
import { SECRET_NAMES } from '../src/model/secret-names.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { clusterExpectations } from '../src/verify/cluster/expect.js';
import { PROBE_NAMESPACE } from '../src/verify/cluster/probes.js';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { writeKnownHosts } from './harness/fixture.js';
import { hasStackTrace, runCli } from './helpers/cli.js';
import { kubeconfigFor } from './helpers/fake-apiserver.js';
import { startKubeApiStandin, type KubeApiStandin } from './helpers/kube-api-standin.js';
import { makePki } from './helpers/pki.js';
import { nodeObject, systemPods, TOKEN } from './helpers/verify-cluster-fixture.js';

const skip = harnessAvailable();

function localOs(): string {
  const release = readFileSync('/etc/os-release', 'utf8');
  const field = (name: string): string => (new RegExp(`^${name}="?([^"\\n]*)"?$`, 'm').exec(release)?.[1] ?? '').trim();
  return `${field('ID')}-${field('VERSION_ID')}`;
}

describe('kubemix up SPEC ends with verify', { skip, timeout: 180_000 }, () => {
  let net: TestNet;
  let api: KubeApiStandin;
  let nodePort: Server;
  let specFile: string;
  let knownHosts: string;
  let state: string;

  before(async () => {
    net = await TestNet.create(2, { privateHosts: true });
    writeFileSync(net.hostsFile, `127.0.0.1 localhost\n${net.hosts[0]!.address} api.lab.kubeinit.local\n`);
    knownHosts = writeKnownHosts(net);
    const text = stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'lab' },
      spec: {
        kubernetes: { version: '1.36' },
        network: { nodeCidr: '198.51.100.0/24' },
        infrastructure: {
          driver: 'existing',
          hosts: net.hosts.map((h, i) => ({
            name: h.name,
            address: h.address,
            roles: [i === 0 ? 'control-plane' : 'worker'],
            os: localOs(),
            identityFile: net.clientKey,
          })),
        },
        services: { enabled: false },
      },
    });
    specFile = join(net.root, 'cluster.yaml');
    writeFileSync(specFile, text);
    const model = resolveModel(readSpec({ kind: 'file', path: specFile, text }));
    const e = clusterExpectations(model);
    nodePort = createServer((_, res) => res.end(`echo-${e.nodes[1]!.name}\n`));
    await new Promise<void>((r) => nodePort.listen(0, '127.0.0.1', r));
    mkdirSync(join(net.root, 'pki'));
    const pki = makePki(join(net.root, 'pki'));
    api = await startKubeApiStandin(pki.server('apiserver'), {
      token: TOKEN,
      gitVersion: 'v1.36.1',
      nodes: e.nodes.map(nodeObject),
      systemPods: systemPods(e),
      runtimeClasses: [],
      nodePort: (nodePort.address() as { port: number }).port,
    });
    // A finished deploy: every task done with its inputs, every captured secret there, the admin kubeconfig too.
    state = join(net.root, 'state');
    const paths = await prepareStateDir(state);
    const { plan, files } = assemblePlan(model);
    const artifacts = new Map(plan.artifacts.map((a) => [a.id, a]));
    const downloads = new Map((plan.downloads ?? []).map((d) => [d.id, d]));
    const journal = await Journal.open(state, plan.cluster.name, plan.hash);
    for (const t of plan.tasks)
      await journal.record(t.id, {
        state: 'done',
        host: t.host,
        inputHash: taskInputHash(t, artifacts, downloads),
        attempts: 1,
        changed: true,
      });
    await journal.close();
    assert.ok(files.length > 0);
    const secrets = await SecretStore.open(paths.secrets);
    for (const name of new Set(plan.tasks.flatMap((t) => (t.captures ?? []).map((c) => c.name))))
      await secrets.set(name, { value: `captured-${name}`, source: 'captured' });
    await secrets.set(SECRET_NAMES.adminKubeconfig, {
      value: kubeconfigFor(api.url, pki.caCert, TOKEN),
      source: 'captured',
    });
  });
  after(async () => {
    await api?.close();
    if (nodePort !== undefined) await new Promise((r) => nodePort.close(r));
    await net?.cleanup();
  });

  it('a bad verify flag is refused before anything runs (exit 2)', async () => {
    const r = await runCli(['up', specFile, '--known-hosts', knownHosts, '--state-dir', state, '--egress', 'nope']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /flags\.egress: --egress "nope": give HOST:PORT/);
    assert.doesNotMatch(r.stderr, /task-/);
    assert.equal(api.requests.length, 0);
  });

  it('--skip-verify: up skips every done task and ends there (no API request)', async () => {
    const r = await runCli(['up', specFile, '--known-hosts', knownHosts, '--state-dir', state, '--skip-verify'], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /underlay:|cluster:/);
    assert.equal(api.requests.length, 0);
  });

  it('without it: both layers run, the underlay over SSH and the cluster through the API', async () => {
    const egress = `127.0.0.1:${(nodePort.address() as { port: number }).port}`;
    const r = await runCli(['up', specFile, '--known-hosts', knownHosts, '--state-dir', state, '--egress', egress], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
    assert.ok(!hasStackTrace(r.stderr), r.stderr);
    assert.match(r.stdout, /underlay: IP reachability \(ICMP echo\)\n +host-1 +host-2\n +host-1 +· +✓/);
    assert.match(r.stdout, /cluster: pod → pod by IP/);
    assert.match(r.stdout, /cluster: nodes: registered and Ready/);
    assert.match(r.stdout, /cluster: egress: TCP connect/, '--egress reaches the verify at the end');
    assert.match(r.stdout, /\d+ checks passed, \d+ failed, \d+ skipped/);
    assert.ok(api.requests.some((q) => q.method === 'POST' && q.path === '/api/v1/namespaces'));
    assert.ok(api.requests.some((q) => q.method === 'DELETE' && q.path === `/api/v1/namespaces/${PROBE_NAMESPACE}`));
    // Nothing listens on 6443/10250 on the test hosts: those underlay cells fail, so up exits 1 with the report.
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /✗ underlay tcp-/);
  });
});
