// spec.kubernetes.timeouts and spec.kubernetes.controlPlaneProbes: what a
// user on slow machines (software emulation, small VMs) sets, validated at
// the spec boundary and rendered into every kubeadm document that waits (init,
// joins, upgrades; Windows joins too), as kubeadm patches on the control
// plane's static pods, and into the executor's limit for those commands.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { InvalidSpecError } from '../src/errors.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { assembleUpgradePlan } from '../src/plan/upgrade/assemble.js';
import { renderKubeadm, upgradeDocument } from '../src/render/kubeadm/config.js';
import { renderProbePatches } from '../src/render/kubeadm/patches.js';
import { goDuration } from '../src/render/kubeadm/timeouts.js';
import { joinConfiguration } from '../src/render/windows/kubeadm.js';
import { readSpec } from '../src/spec/read.js';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HAPROXY_CONFIG } from '../src/render/services/haproxy.js';
import { repoPath } from './helpers/cli.js';
import { scratch, writeNodeTree } from './helpers/shapes.js';

type Doc = Record<string, unknown>;

const SPEC = {
  apiVersion: 'kubemix.dev/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'slow' },
  spec: {
    domain: 'e2e.internal',
    kubernetes: { version: '1.35.4' },
    network: { nodeCidr: '192.0.2.0/24' },
    infrastructure: {
      driver: 'existing',
      hosts: [
        { name: 'cp1', address: '192.0.2.10', roles: ['control-plane'], os: 'debian-12' },
        { name: 'cp2', address: '192.0.2.11', roles: ['control-plane'], os: 'debian-12' },
        { name: 'w1', address: '192.0.2.20', roles: ['worker'], os: 'debian-12' },
        { name: 'win1', address: '192.0.2.30', roles: ['worker'], os: 'windows-2022' },
      ],
    },
    services: { enabled: false },
  },
};

const SLOW = {
  timeouts: { controlPlaneComponentHealthCheck: '10m', tlsBootstrap: '900s', upgradeManifests: '1h' },
  controlPlaneProbes: { timeoutSeconds: 60, livenessFailureThreshold: 24 },
};

function model(kubernetes: Doc): ClusterModel {
  const doc = { ...SPEC, spec: { ...SPEC.spec, kubernetes: { ...SPEC.spec.kubernetes, ...kubernetes } } };
  return resolveModel(readSpec({ kind: 'file', path: 'slow.yaml', text: stringify(doc) }));
}

const node = (m: ClusterModel, name: string) => m.nodes.find((n) => n.name === name) ?? assert.fail(name);
const docs = (text: string): Doc[] => parseAllDocuments(text).map((d) => d.toJS() as Doc);

function refusal(kubernetes: Doc): string {
  try {
    model(kubernetes);
  } catch (error) {
    assert.ok(error instanceof InvalidSpecError, String(error));
    return error.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n');
  }
  return assert.fail('accepted');
}

describe('kubeadm settings for slow machines', () => {
  it('the API server asks etcd with half the probe’s time (its own 2 s made /readyz fail on emulated etcd)', () => {
    const apiServerArgs = (m: ClusterModel): unknown => {
      const cluster = docs(renderKubeadm(m, node(m, 'cp1'), true).content).find(
        (d) => d['kind'] === 'ClusterConfiguration',
      );
      return (cluster?.['apiServer'] as Doc | undefined)?.['extraArgs'];
    };
    assert.deepEqual(apiServerArgs(model(SLOW)), [
      { name: 'etcd-healthcheck-timeout', value: '30s' },
      { name: 'etcd-readycheck-timeout', value: '30s' },
    ]);
    assert.deepEqual(
      apiServerArgs(model({ controlPlaneProbes: { timeoutSeconds: 3 } })),
      [
        { name: 'etcd-healthcheck-timeout', value: '2s' },
        { name: 'etcd-readycheck-timeout', value: '2s' },
      ],
      'never below kube-apiserver’s own default',
    );
    assert.equal(apiServerArgs(model({ controlPlaneProbes: { livenessFailureThreshold: 20 } })), undefined);
    assert.equal(apiServerArgs(model({})), undefined, 'no flag unasked');
  });

  it('leader election reaches both elected components as Go durations; the fields left out stay unset', () => {
    const cluster = (m: ClusterModel): Doc =>
      docs(renderKubeadm(m, node(m, 'cp1'), true).content).find((d) => d['kind'] === 'ClusterConfiguration') ??
      assert.fail('ClusterConfiguration');
    const c = cluster(model({ leaderElection: { leaseDuration: '2m', renewDeadline: '90s' } }));
    const want = [
      { name: 'leader-elect-lease-duration', value: '2m0s' },
      { name: 'leader-elect-renew-deadline', value: '1m30s' },
    ];
    assert.deepEqual((c['controllerManager'] as Doc)['extraArgs'], want);
    assert.deepEqual((c['scheduler'] as Doc)['extraArgs'], want);
    const plain = cluster(model({}));
    assert.equal(plain['controllerManager'], undefined);
    assert.equal(plain['scheduler'], undefined);
  });

  it('refuses leader-election durations the components would refuse at start, naming the field', () => {
    assert.match(
      refusal({ leaderElection: { renewDeadline: '20s' } }),
      /spec\.kubernetes\.leaderElection\.renewDeadline: leaseDuration \(15s\) must be longer than renewDeadline \(20s\)/,
    );
    assert.match(
      refusal({ leaderElection: { leaseDuration: '60s', renewDeadline: '30s', retryPeriod: '25s' } }),
      /leaderElection\.retryPeriod: renewDeadline \(30s\) must be longer than 1\.2 × retryPeriod \(25s\)/,
    );
    assert.match(refusal({ leaderElection: { leaseDuration: '15' } }), /leaseDuration.*duration such as 90s/);
    assert.match(refusal({ leaderElection: { lease: '60s' } }), /leaderElection/);
  });

  it('etcd timings reach the local etcd as integers of milliseconds; the field left out stays unset', () => {
    const etcd = (m: ClusterModel): unknown =>
      docs(renderKubeadm(m, node(m, 'cp1'), true).content).find((d) => d['kind'] === 'ClusterConfiguration')?.['etcd'];
    assert.deepEqual(etcd(model({ etcd: { heartbeatInterval: '1s', electionTimeout: '15s' } })), {
      local: {
        extraArgs: [
          { name: 'heartbeat-interval', value: '1000' },
          { name: 'election-timeout', value: '15000' },
        ],
      },
    });
    assert.deepEqual(etcd(model({ etcd: { electionTimeout: '2500ms' } })), {
      local: { extraArgs: [{ name: 'election-timeout', value: '2500' }] },
    });
    assert.equal(etcd(model({})), undefined, 'no flag unasked');
  });

  it('the kubelet’s runtime request timeout reaches the KubeletConfiguration kubeadm uploads for every node', () => {
    const kubelet = (m: ClusterModel): Doc =>
      docs(renderKubeadm(m, node(m, 'cp1'), true).content).find((d) => d['kind'] === 'KubeletConfiguration') ??
      assert.fail('KubeletConfiguration');
    assert.equal(kubelet(model({ kubelet: { runtimeRequestTimeout: '10m' } }))['runtimeRequestTimeout'], '10m0s');
    assert.equal('runtimeRequestTimeout' in kubelet(model({})), false, 'kubelet’s default unasked');
    assert.match(
      refusal({ kubelet: { runtimeRequestTimeout: '2' } }),
      /kubelet\.runtimeRequestTimeout: must be a duration/,
    );
    assert.match(refusal({ kubelet: { requestTimeout: '2m' } }), /spec\.kubernetes\.kubelet/);
  });

  it('refuses etcd timings etcd would refuse at start, naming the field', () => {
    assert.match(
      refusal({ etcd: { heartbeatInterval: '300ms' } }),
      /spec\.kubernetes\.etcd\.heartbeatInterval: electionTimeout \(1000ms\) must be at least 5 × heartbeatInterval \(300ms\)/,
    );
    assert.match(
      refusal({ etcd: { heartbeatInterval: '1s', electionTimeout: '4s' } }),
      /etcd\.electionTimeout: electionTimeout \(4000ms\) must be at least 5 × heartbeatInterval \(1000ms\)/,
    );
    assert.match(refusal({ etcd: { electionTimeout: '51s' } }), /etcd\.electionTimeout: must be at most 50s/);
    assert.match(
      refusal({ etcd: { electionTimeout: '1m' } }),
      /electionTimeout: must be a duration such as 500ms or 10s/,
    );
    assert.match(refusal({ etcd: { electionTimeout: '0ms' } }), /electionTimeout: must be a duration/);
    assert.match(refusal({ etcd: { election: '10s' } }), /spec\.kubernetes\.etcd/);
    model({ etcd: { heartbeatInterval: '200ms', electionTimeout: '1s' } });
    model({ etcd: { heartbeatInterval: '10s', electionTimeout: '50s' } });
  });

  it('HAProxy checks the API servers with the same slack, and haproxy -c accepts it', () => {
    const path = repoPath('examples', 'existing-host-gw.yaml');
    const m = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
    const probes = m.kubeadm.controlPlaneProbes ?? assert.fail('the example sets controlPlaneProbes');
    const { files } = assemblePlan(m);
    const cfg = files.find((f) => f.remotePath === HAPROXY_CONFIG)?.content ?? assert.fail('haproxy.cfg');
    const api = cfg.slice(cfg.indexOf('backend kubernetes-api'), cfg.indexOf('frontend ingress-http'));
    assert.match(api, new RegExp(`^    timeout check ${probes.timeoutSeconds}s$`, 'm'));
    assert.match(api, new RegExp(` fall ${probes.livenessFailureThreshold} rise 2$`, 'm'));
    assert.doesNotMatch(cfg.slice(cfg.indexOf('frontend ingress-http')), /fall (?!3 )/, 'ingress keeps its checks');
    const tmp = scratch('haproxy-slow');
    try {
      writeNodeTree(tmp.dir, files, 'svc1');
      const out = execFileSync('haproxy', ['-c', '-f', join(tmp.dir, HAPROXY_CONFIG)], { encoding: 'utf8' });
      assert.match(out, /Configuration file is valid/);
    } finally {
      tmp.remove();
    }
  });

  it('prints durations as Go does', () => {
    assert.deepEqual([45, 90, 600, 3600, 5430].map(goDuration), ['45s', '1m30s', '10m0s', '1h0m0s', '1h30m30s']);
  });

  it('renders the timeouts into init and every join, over the join’s discovery default; patches on control planes', () => {
    const m = model(SLOW);
    const [init] = docs(renderKubeadm(m, node(m, 'cp1'), true).content);
    const timeouts = { controlPlaneComponentHealthCheck: '10m0s', tlsBootstrap: '15m0s', upgradeManifests: '1h0m0s' };
    assert.deepEqual(init?.['timeouts'], timeouts);
    assert.deepEqual(init?.['patches'], { directory: '/etc/kubemix/kubeadm/patches' });
    const [cpJoin] = docs(renderKubeadm(m, node(m, 'cp2'), false).content);
    assert.deepEqual(cpJoin?.['timeouts'], { ...timeouts, discovery: '5m0s' });
    assert.deepEqual(cpJoin?.['patches'], { directory: '/etc/kubemix/kubeadm/patches' });
    const [workerJoin] = docs(renderKubeadm(m, node(m, 'w1'), false).content);
    assert.deepEqual(workerJoin?.['timeouts'], { ...timeouts, discovery: '5m0s' });
    assert.equal(workerJoin?.['patches'], undefined, 'a worker has no static pods to patch');
    const win = parse(joinConfiguration(m, node(m, 'win1'))) as Doc;
    assert.deepEqual(win['timeouts'], { ...timeouts, discovery: '5m0s' });
  });

  it('patches only the probes each static pod has (a merge would add one without a handler)', () => {
    const m = model(SLOW);
    const patches = renderProbePatches(m, node(m, 'cp1'));
    assert.deepEqual(
      patches.map((p) => p.remotePath),
      ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map(
        (c) => `/etc/kubemix/kubeadm/patches/${c}+strategic.yaml`,
      ),
    );
    const containers = patches.map((p) => (parse(p.content) as { spec: { containers: Doc[] } }).spec.containers);
    assert.deepEqual(containers[2], [
      {
        name: 'kube-controller-manager',
        livenessProbe: { timeoutSeconds: 60, failureThreshold: 24 },
        startupProbe: { timeoutSeconds: 60 },
      },
    ]);
    assert.deepEqual(Object.keys(containers[1]?.[0] ?? {}), [
      'name',
      'livenessProbe',
      'readinessProbe',
      'startupProbe',
    ]);
    assert.deepEqual(renderProbePatches(m, node(m, 'w1')), [], 'no patches on a worker');
    // Only the threshold set: the probes it does not touch are left out.
    const only = model({ controlPlaneProbes: { livenessFailureThreshold: 30 } });
    const [etcd] = renderProbePatches(only, node(only, 'cp1'));
    assert.deepEqual(parse(etcd?.content ?? ''), {
      spec: { containers: [{ name: 'etcd', livenessProbe: { failureThreshold: 30 } }] },
    });
  });

  it('raises the executor’s limit of each kubeadm command by what the spec adds to its waits', () => {
    const timeouts = (m: ClusterModel): Record<string, number | undefined> => {
      const tasks = assemblePlan(m).plan.tasks;
      const of = (suffix: string) => tasks.find((t) => t.id.endsWith(suffix))?.timeoutSeconds;
      return { init: of('/cp1/kubeadm-init'), cpJoin: of('/cp2/kubeadm-join'), join: of('/w1/kubeadm-join') };
    };
    assert.deepEqual(timeouts(model({})), { init: 900, cpJoin: 900, join: 900 });
    // init: +360 (control plane 4m → 10m); joins: +600 (TLS bootstrap 5m → 15m), the control-plane join +360 more.
    assert.deepEqual(timeouts(model(SLOW)), { init: 1260, cpJoin: 1860, join: 1500 });
  });

  it('upgrades with an UpgradeConfiguration and the same patches, only when the spec asks', () => {
    const m = model(SLOW);
    assert.deepEqual(upgradeDocument(m, node(m, 'cp1')), {
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'UpgradeConfiguration',
      apply: { patches: { directory: '/etc/kubemix/kubeadm/patches' } },
      node: { patches: { directory: '/etc/kubemix/kubeadm/patches' } },
      timeouts: { controlPlaneComponentHealthCheck: '10m0s', tlsBootstrap: '15m0s', upgradeManifests: '1h0m0s' },
    });
    const plan = assembleUpgradePlan(model({ ...SLOW, version: '1.36' }), {
      from: '1.35.4',
      maxUnavailable: 1,
    } as Parameters<typeof assembleUpgradePlan>[1]).plan;
    const apply = plan.tasks.find((t) => t.id.endsWith('/cp1/upgrade-apply')) ?? assert.fail('no upgrade-apply');
    assert.match(
      JSON.stringify(apply.apply),
      /kubeadm upgrade apply 'v1\.36\.3' --yes --config \/etc\/kubemix\/kubeadm\/upgrade\.yaml/,
    );
    assert.equal(apply.uploads.length, 5, 'the upgrade config and four patches');
    // Four static pods, each up to an hour, and etcd's and the API's calls: 900 + 4 × 3300.
    assert.equal(apply.timeoutSeconds, 900 + 4 * 3300);
    // The wait for the node after its new kubelet: 300 s, plus what the spec adds to the control plane's wait (+360).
    const readyLimit = (n: string) => plan.tasks.find((t) => t.id.endsWith(`/upgrade-ready-${n}`))?.timeoutSeconds;
    assert.deepEqual([readyLimit('cp1'), readyLimit('w1')], [660 + 60, 300 + 60]);
    const worker = plan.tasks.find((t) => t.id.endsWith('/w1/upgrade-node')) ?? assert.fail('no upgrade-node');
    assert.match(JSON.stringify(worker.apply), /kubeadm upgrade node --config/);
    const plain = assembleUpgradePlan(model({ version: '1.36' }), {
      from: '1.35.4',
      maxUnavailable: 1,
    } as Parameters<typeof assembleUpgradePlan>[1]).plan;
    const before = plain.tasks.find((t) => t.id.endsWith('/cp1/upgrade-apply'));
    assert.doesNotMatch(JSON.stringify(before?.apply), /--config/);
    assert.equal(before?.timeoutSeconds, 900);
  });

  it('ignorePreflightErrors reaches every kubeadm that runs preflight: init, joins, upgrade apply and node, Windows too', () => {
    const m = model({ ignorePreflightErrors: ['CreateJob', 'Port-6443'] });
    const want = ['CreateJob', 'Port-6443'];
    const registration = (d: Doc | undefined): unknown =>
      (d?.['nodeRegistration'] as Doc | undefined)?.['ignorePreflightErrors'];
    const [init] = docs(renderKubeadm(m, node(m, 'cp1'), true).content);
    assert.deepEqual(registration(init), want);
    assert.deepEqual(registration(docs(renderKubeadm(m, node(m, 'cp2'), false).content)[0]), want);
    assert.deepEqual(registration(docs(renderKubeadm(m, node(m, 'w1'), false).content)[0]), want);
    assert.deepEqual(registration(parse(joinConfiguration(m, node(m, 'win1'))) as Doc), want);
    // Alone, it is enough for an UpgradeConfiguration: apply (CreateJob is its check) and node.
    assert.deepEqual(upgradeDocument(m, node(m, 'w1')), {
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'UpgradeConfiguration',
      apply: { ignorePreflightErrors: want },
      node: { ignorePreflightErrors: want },
    });
    const both = model({ ...SLOW, ignorePreflightErrors: ['CreateJob'] });
    assert.deepEqual((upgradeDocument(both, node(both, 'cp1')) as Doc)['apply'], {
      patches: { directory: '/etc/kubemix/kubeadm/patches' },
      ignorePreflightErrors: ['CreateJob'],
    });
    const plan = assembleUpgradePlan(model({ ignorePreflightErrors: ['CreateJob'], version: '1.36' }), {
      from: '1.35.4',
      maxUnavailable: 1,
    } as Parameters<typeof assembleUpgradePlan>[1]).plan;
    const apply = plan.tasks.find((t) => t.id.endsWith('/cp1/upgrade-apply')) ?? assert.fail('no upgrade-apply');
    assert.match(JSON.stringify(apply.apply), /kubeadm upgrade apply 'v1\.36\.3' --yes --config /);
    const win = plan.tasks.find((t) => t.host === 'win1' && /kubeadm upgrade node/.test(JSON.stringify(t.apply)));
    assert.match(JSON.stringify(win?.apply), /upgrade node --kubeconfig .* --ignore-preflight-errors 'CreateJob'/);
    // Not set: no field anywhere, no flag on Windows.
    const plain = model({});
    assert.equal(registration(docs(renderKubeadm(plain, node(plain, 'cp1'), true).content)[0]), undefined);
    assert.doesNotMatch(joinConfiguration(plain, node(plain, 'win1')), /ignorePreflightErrors/);
    assert.equal(upgradeDocument(plain, node(plain, 'w1')), undefined);
  });

  it('refuses preflight names kubeadm would not match, twice the same check, or all beside others', () => {
    assert.match(
      refusal({ ignorePreflightErrors: ['Create Job'] }),
      /spec\.kubernetes\.ignorePreflightErrors\[0\]: .*CreateJob or Port-6443, or all/,
    );
    assert.match(refusal({ ignorePreflightErrors: ["x'; rm -rf /"] }), /spec\.kubernetes\.ignorePreflightErrors\[0\]/);
    assert.match(
      refusal({ ignorePreflightErrors: ['CreateJob', 'createjob'] }),
      /spec\.kubernetes\.ignorePreflightErrors: names each check once/,
    );
    assert.match(refusal({ ignorePreflightErrors: ['all', 'Swap'] }), /'all' only alone/);
    assert.match(refusal({ ignorePreflightErrors: [] }), /spec\.kubernetes\.ignorePreflightErrors/);
    assert.deepEqual(model({ ignorePreflightErrors: ['all'] }).kubeadm.ignorePreflightErrors, ['all']);
  });

  it('refuses durations kubeadm would misread or that are typos, naming the field', () => {
    assert.match(
      refusal({ timeouts: { discovery: '5 minutes' } }),
      /spec\.kubernetes\.timeouts\.discovery: .*90s, 10m or 1h/,
    );
    assert.match(refusal({ timeouts: { discovery: '10m30s' } }), /spec\.kubernetes\.timeouts\.discovery/);
    assert.match(
      refusal({ timeouts: { tlsBootstrap: '25h' } }),
      /spec\.kubernetes\.timeouts\.tlsBootstrap: must be at most 24h/,
    );
    assert.match(refusal({ timeouts: { bootstrap: '5m' } }), /spec\.kubernetes\.timeouts/);
    assert.match(
      refusal({ controlPlaneProbes: { timeoutSeconds: 0 } }),
      /spec\.kubernetes\.controlPlaneProbes\.timeoutSeconds/,
    );
    assert.match(
      refusal({ controlPlaneProbes: { livenessFailureThreshold: 2.5 } }),
      /spec\.kubernetes\.controlPlaneProbes\.livenessFailureThreshold/,
    );
  });
});
