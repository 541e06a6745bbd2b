// Calico with Windows workers (examples/calico-mixed.yaml and the Windows
// fixtures): the operator's custom resources valid against the CRDs' own
// OpenAPI, the ConfigMap against the Kubernetes OpenAPI, the Windows
// dataplane settings, the cluster order (operator → Installation → Linux
// Ready → Windows join → calico-node-windows Ready → post-deployment), the
// Windows steps that differ from flannel's, scripts that parse and pass our
// rules, the authorization audit, the matrix refusals and the CNI switch.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { auditPlan } from '../src/audit/index.js';
import { InputError } from '../src/errors.js';
import { applyPlan } from '../src/exec/apply-plan.js';
import { Journal } from '../src/exec/journal.js';
import { CALICO, CALICO_WINDOWS, FLANNEL_VXLAN } from '../src/matrix/index.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { assertSameCni, deployedCni } from '../src/plan/cni-switch.js';
import { assembleResetPlan } from '../src/plan/reset.js';
import { HELPERS_PATH } from '../src/render/windows/helpers.js';
import { WIN } from '../src/render/windows/paths.js';
import { readSpec } from '../src/spec/read.js';
import { CALICO_CRDS, crdErrors } from './helpers/calico-crd.js';
import { repoPath } from './helpers/cli.js';
import { CALICO_COMBOS, CALICO_TASK_ORDER, comboName, hostFiles, modelFor, specText } from './windows/fixtures.js';
import { lintPowerShell, parseErrors, undefinedHelpers } from './windows/powershell.js';

const STOP = "$ErrorActionPreference = 'Stop'\n";

type Obj = Record<string, any>;
const DEPLOY = 'task-deploy-cluster';

function example(name: string) {
  const path = repoPath('examples', `${name}.yaml`);
  return resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
}

const model = example('calico-mixed');
const { plan, files } = assemblePlan(model);
const docs = parseAllDocuments(files.find((f) => f.remotePath === 'manifests/calico.yaml')?.content ?? '').map(
  (d) => d.toJS() as Obj,
);
const byKind = (kind: string): Obj => docs.find((d) => d.kind === kind) ?? assert.fail(`no ${kind}`);
const win = plan.nodes.filter((n) => n.osFamily === 'windows');
const first = plan.tasks.find((t) => t.name === 'kubeadm-init')?.host ?? '';

describe('examples/calico-mixed.yaml: the manifests', () => {
  it('names the CRD source it validates against', () => {
    assert.deepEqual(CALICO_CRDS.source, {
      repository: 'projectcalico/calico',
      path: 'manifests/operator-crds.yaml',
      tag: 'v3.32.1',
      commit: '0ca9d1b93644778cafdf1812f3dda02ac0c361e8',
    });
  });

  it("Installation, FelixConfiguration and IPAMConfig validate against the operator's CRD OpenAPI", () => {
    for (const kind of ['Installation', 'FelixConfiguration', 'IPAMConfig'])
      assert.deepEqual(crdErrors(byKind(kind)), [], kind);
  });

  it('the CRD check fails on a wrong enum, an unknown field and a wrong group', () => {
    const inst = byKind('Installation');
    const bad = structuredClone(inst);
    bad.spec.calicoNetwork.windowsDataplane = 'VFP';
    assert.ok(crdErrors(bad).some((e) => e.includes('/spec/calicoNetwork/windowsDataplane')));
    const unknown = structuredClone(inst);
    unknown.spec.windowsNodes.cniConfDir = 'C:\\x';
    assert.ok(crdErrors(unknown).some((e) => e.includes('additionalProperty')));
    assert.ok(crdErrors({ ...byKind('IPAMConfig'), apiVersion: 'projectcalico.org/v3' }).length > 0);
  });

  it('the ConfigMap validates against the Kubernetes OpenAPI and points at the API endpoint by address', async () => {
    const { ConfigMap } = await import('kubernetes-models/v1');
    const cm = byKind('ConfigMap');
    assert.doesNotThrow(() => new ConfigMap(cm as never).validate());
    assert.deepEqual(cm.metadata, { name: 'kubernetes-services-endpoint', namespace: 'tigera-operator' });
    assert.deepEqual(cm.data, {
      KUBERNETES_SERVICE_HOST: plan.cluster.apiEndpoint.address,
      KUBERNETES_SERVICE_PORT: String(plan.cluster.apiEndpoint.port),
    });
  });

  it('Windows dataplane HNS, VXLAN VNI ≥ 4096 on 4789, strict affinity, service CIDRs, CNI dirs = containerd’s', () => {
    const inst = byKind('Installation').spec;
    assert.equal(inst.calicoNetwork.windowsDataplane, 'HNS');
    assert.equal(inst.calicoNetwork.bgp, 'Disabled');
    assert.equal(inst.calicoNetwork.ipPools[0].encapsulation, 'VXLAN');
    assert.deepEqual(inst.serviceCIDRs, [plan.cluster.network.serviceCidr]);
    const felix = byKind('FelixConfiguration').spec;
    assert.ok(felix.vxlanVNI >= 4096);
    assert.equal(felix.vxlanPort, FLANNEL_VXLAN.port);
    assert.equal(byKind('IPAMConfig').spec.strictAffinity, true);
    const toml = files.find((f) => f.node === win[0]?.name && f.remotePath === WIN.containerdConfig)?.content ?? '';
    assert.ok(toml.includes(`bin_dirs = ['${inst.windowsNodes.cniBinDir}']`));
    assert.ok(toml.includes(`conf_dir = '${inst.windowsNodes.cniConfigDir}'`));
  });

  it('node addresses are autodetected inside the node network, where every planned node IP lies', () => {
    const cidrs = byKind('Installation').spec.calicoNetwork.nodeAddressAutodetectionV4.cidrs as string[];
    assert.deepEqual(cidrs, [plan.cluster.network.nodeCidr]);
    const [net, bits] = (cidrs[0] ?? '').split('/');
    const toInt = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    const mask = 2 ** 32 - 2 ** (32 - Number(bits));
    for (const n of plan.nodes)
      assert.equal((toInt(n.ip) & mask) >>> 0, toInt(net ?? ''), `${n.name} ${n.ip} outside ${cidrs[0]}`);
  });

  it('no flannel anywhere: no flannel manifests, files or tasks', () => {
    assert.ok(!files.some((f) => /flannel/.test(f.remotePath)));
    assert.ok(!plan.tasks.some((t) => /flannel/.test(t.name) || /flanneld/.test(t.apply.script)));
  });
});

describe('examples/calico-mixed.yaml: the order', () => {
  const task = (id: string) => plan.tasks.find((t) => t.id === id) ?? assert.fail(`no task ${id}`);
  /** Every task `id` waits for, directly or not. */
  const upstream = (id: string, seen = new Set<string>()): Set<string> => {
    for (const d of task(id).after) if (!seen.has(d)) upstream(d, seen.add(d));
    return seen;
  };
  it('operator after init, Installation (cluster manifests) after the operator', () => {
    assert.deepEqual(task(`${DEPLOY}/${first}/calico-operator`).after, [`${DEPLOY}/${first}/kubeadm-init`]);
    assert.ok(task(`${DEPLOY}/${first}/cluster-manifests`).after.includes(`${DEPLOY}/${first}/calico-operator`));
  });

  it('the Windows join waits for the Linux side Ready (every Linux join, Calico Available)', () => {
    const ready = task(`${DEPLOY}/${first}/calico-linux-ready`);
    assert.match(ready.apply.script, /tigerastatus\/calico/);
    assert.match(ready.apply.script, /rollout status daemonset\/calico-node /);
    const linuxJoins = plan.tasks.filter((t) => t.name === 'kubeadm-join').map((t) => t.id);
    assert.ok(linuxJoins.length > 0);
    for (const j of [...linuxJoins, `${DEPLOY}/${first}/cluster-manifests`]) assert.ok(ready.after.includes(j), j);
    for (const n of win) assert.ok(upstream(`${DEPLOY}/${n.name}/win-kubeadm-join`).has(ready.id), n.name);
  });

  it('kube-proxy and calico-node-windows Ready on every Windows node before post-deployment', () => {
    const ready = task(`${DEPLOY}/${first}/calico-windows-ready`);
    assert.match(ready.apply.script, /rollout status daemonset\/calico-node-windows/);
    for (const n of win) {
      assert.ok(ready.after.includes(`${DEPLOY}/${n.name}/win-kube-proxy-pod`));
      assert.ok(ready.apply.script.includes(`node/${n.name.toLowerCase()}`));
    }
    for (const t of plan.tasks.filter((x) => x.stage === 'task-post-deployment' && x.name === 'linux-only-addons'))
      assert.ok(upstream(t.id).has(ready.id), t.id);
  });

  it('the Windows steps: no External network, flanneld or CNI config of ours; Calico’s network awaited', () => {
    for (const n of win) {
      const names = plan.tasks.filter((t) => t.host === n.name).map((t) => t.name);
      assert.deepEqual(names.filter((x) => x.startsWith('win-')).sort(), [...CALICO_TASK_ORDER].sort());
      const mine = files.filter((f) => f.node === n.name).map((f) => f.remotePath);
      for (const absent of [WIN.cniConf, WIN.flannelNetConf, WIN.flanneldServiceXml]) assert.ok(!mine.includes(absent));
    }
  });
});

describe('Calico × Windows Server 2022 × 1.35/1.36/1.37 (golden fixtures)', () => {
  for (const c of CALICO_COMBOS) {
    it(`${comboName(c)}: every PowerShell script and .ps1 file parses and passes our rules`, () => {
      const m = modelFor(c);
      const up = assemblePlan(m);
      const reset = assembleResetPlan(m);
      const scripts = [
        ...[...up.plan.tasks, ...reset.plan.tasks].flatMap((t) =>
          [t.check, t.apply].flatMap((x) => (x?.shell === 'powershell' ? [[t.id, x.script, t.host] as const] : [])),
        ),
        // The helpers file runs dot-sourced, after its caller's `$ErrorActionPreference = 'Stop'`.
        ...[...up.files, ...reset.files]
          .filter((f) => f.remotePath.endsWith('.ps1'))
          .map(
            (f) => [f.remotePath, f.remotePath === HELPERS_PATH ? `${STOP}${f.content}` : f.content, f.node] as const,
          ),
      ];
      assert.ok(scripts.length > 20);
      for (const [where, text, host] of scripts) {
        assert.deepEqual(parseErrors(text), [], where);
        assert.deepEqual(lintPowerShell(text), [], where);
        assert.deepEqual(undefinedHelpers(text, hostFiles(up.plan, up.files, host)), [], where);
      }
    });
  }

  it('1.37 is planned with a warning: Calico 3.32 is tested against 1.34–1.36', () => {
    const w = (k8s: '1.36' | '1.37') =>
      modelFor({ k8s, os: 'windows-2022', backend: 'vxlan', calico: true }).warnings.map((x) => x.code);
    assert.ok(w('1.37').includes('cni.calico-kubernetes-untested'));
    assert.ok(!w('1.36').includes('cni.calico-kubernetes-untested'));
    assert.deepEqual([...CALICO.testedKubernetes], ['1.34', '1.35', '1.36']);
  });

  it('Windows Server 2025 is refused with the reason, naming the versions', () => {
    const text = specText({ k8s: '1.36', os: 'windows-2025', backend: 'vxlan', calico: true });
    assert.throws(
      () => readSpec({ kind: 'file', path: 'ws2025.yaml', text }),
      (e: any) =>
        e.diagnostics.some(
          (d: any) =>
            d.code === 'cni.calico-windows-build' &&
            d.message ===
              `windows-2025 cannot run Calico ${CALICO.version}: ${CALICO_WINDOWS.unsupported['windows-2025']}`,
        ),
    );
  });

  it("Calico's Windows limits: 60 pods per node (one /26 block, 4 addresses reserved), no VXLAN MTU setting", () => {
    const patch = (calico: boolean) =>
      assemblePlan(modelFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan', calico })).files.find(
        (f) => f.remotePath === WIN.kubeletPatch,
      )?.content ?? '';
    assert.match(patch(true), /^maxPods: 60$/m);
    assert.doesNotMatch(patch(false), /maxPods/);
    assert.equal(byKind('Installation').spec.calicoNetwork.ipPools[0].blockSize, 26);
    const text = specText({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan', calico: true }).replace(
      'backend: vxlan',
      'backend: vxlan\n    mtu: 1400',
    );
    const codes = readSpec({ kind: 'file', path: 'mtu.yaml', text }).warnings.map((w) => w.code);
    assert.ok(codes.includes('cni.calico-windows-mtu'));
  });

  it('boot and reset scripts: Calico’s networks and files, not flannel’s', () => {
    const m = modelFor(CALICO_COMBOS[1] ?? assert.fail());
    const { files: f } = assemblePlan(m);
    const boot = f.find((x) => x.remotePath === WIN.bootScript)?.content ?? '';
    const reset = f.find((x) => x.remotePath === WIN.resetScript)?.content ?? '';
    assert.ok(!boot.includes('New-HnsNetwork') && !boot.includes("'flanneld'"));
    // The kubelet runs calico-node-windows and the kube-proxy pod; the pod's launcher takes the source VIP from Calico_ep.
    assert.doesNotMatch(boot, /Start-Service -Name 'kube-proxy'/);
    const launcher = f.find((x) => x.remotePath === WIN.kubeProxyLauncher)?.content ?? '';
    assert.match(launcher, /Get-KubemixCalicoEndpoint[\s\S]*source-vip\.json[\s\S]*kube-proxy\.exe/);
    assert.match(reset, /@\('External', 'Calico'\) -contains \$_\.Name/);
    for (const p of ['C:\\etc\\cni\\net.d\\10-calico.conflist', 'C:\\etc\\cni\\net.d\\calico-kubeconfig'])
      assert.ok(reset.includes(`'${p}'`), p);
    assert.ok(reset.includes(`'${CALICO_WINDOWS.registryKey}'`));
  });
});

describe('authorization audit with Calico on Windows', () => {
  const result = auditPlan({ plan, files });
  it('covers calico-node-windows and calico.exe on every Windows node, all allowed by the operator’s roles', () => {
    assert.equal(result.ok, true, result.findings.map((f) => f.message).join('\n'));
    for (const n of win) {
      for (const [name, sa] of [
        ['calico-node-windows (HostProcess, operator)', 'calico-node'],
        ['Calico CNI plugin (calico.exe)', 'calico-cni-plugin'],
      ] as const) {
        const c = result.components.find((x) => x.component.name === name && x.component.runsOn === n.name);
        assert.ok(c, `${name} on ${n.name}`);
        assert.deepEqual(c.component.credential, {
          ...c.component.credential,
          kind: 'serviceaccount',
          namespace: 'calico-system',
          name: sa,
        });
        assert.ok(c.decisions.length > 0);
        for (const d of c.decisions) assert.match(d.by, new RegExp(`ClusterRole/${sa} `), JSON.stringify(d.request));
      }
    }
  });

  it("the executor's waits are audited too (tigerastatus, daemonsets, nodes)", () => {
    const exec = result.components.find((c) => c.component.name === "executor's kubectl");
    const wanted = exec?.component.requests.map((r) => `${r.verb} ${r.group}/${r.resource}`) ?? [];
    for (const r of ['watch operator.tigera.io/tigerastatuses', 'watch apps/daemonsets', 'watch /nodes'])
      assert.ok(wanted.includes(r), r);
  });
});

describe('switching the CNI of a running cluster', () => {
  const flannelDone = [`${DEPLOY}/controller-01/kubeadm-init`, `${DEPLOY}/controller-01/cluster-manifests`];
  const calicoDone = [`${DEPLOY}/controller-01/calico-operator`, ...flannelDone];
  it('reads the deployed CNI from the journal', () => {
    assert.equal(deployedCni(flannelDone)?.cni, 'flannel');
    assert.equal(deployedCni(calicoDone)?.cni, 'calico');
    assert.equal(deployedCni([`${DEPLOY}/controller-01/kubeadm-init`]), undefined);
  });
  it('refuses a Calico plan on a flannel cluster and the other way round (exit 2), with a reason', () => {
    assert.throws(
      () => assertSameCni(plan, flannelDone, 'journal.json'),
      (e: unknown) =>
        e instanceof InputError &&
        e.code === 'plan.cni-switch' &&
        e.exit === 2 &&
        e.path === 'spec.cni.plugin' &&
        /deployed with flannel .* this plan uses calico: switching the CNI of a running cluster is not supported/.test(
          e.message,
        ),
    );
    const flannelPlan = assemblePlan(example('k8s-libvirt-1-1-1')).plan;
    assert.throws(() => assertSameCni(flannelPlan, calicoDone, 'journal.json'), /deployed with calico/);
  });
  it('`up` (the executor) refuses it from the journal before anything runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-cni-switch-'));
    try {
      const journal = await Journal.open(dir, plan.cluster.name, 'an-earlier-flannel-plan');
      for (const id of flannelDone)
        await journal.record(id, { state: 'done', host: 'controller-01', inputHash: 'x', attempts: 1 });
      await journal.close();
      const transportFor = () => assert.fail('no host may be contacted');
      await assert.rejects(
        applyPlan(plan, new Map(), { stateDir: dir, signal: new AbortController().signal, transportFor }),
        (e: unknown) => e instanceof InputError && e.code === 'plan.cni-switch',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lets the same CNI, a fresh cluster and `down` (the reset plan) through', () => {
    assert.doesNotThrow(() => assertSameCni(plan, calicoDone, 'journal.json'));
    assert.doesNotThrow(() => assertSameCni(plan, [], 'journal.json'));
    assert.doesNotThrow(() => assertSameCni(assembleResetPlan(model).plan, flannelDone, 'journal.json'));
  });
});
