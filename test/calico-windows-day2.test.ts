// Day 2 on a Calico cluster with a Windows worker (examples/calico-mixed.yaml):
// `upgrade` and `patch` follow the cluster's CNI on the Windows node — no
// flanneld, the kubelet restarted before Calico's network is waited for, then
// kube-proxy with its source VIP read again from Calico's endpoint — traced
// with the real executor; the flannel examples keep flannel's order; and
// diagnose collects and advises for Calico, not flanneld, on that node.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { assembleDiagnosePlan, diagnosedNodes } from '../src/diagnose/plan.js';
import { windowsSections } from '../src/diagnose/sections.js';
import { matchSignatures } from '../src/diagnose/signatures.js';
import { CALICO, CALICO_WINDOWS } from '../src/matrix/index.js';
import { CALICO_WINDOWS_DAEMONSET } from '../src/render/manifests/calico.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePatchPlan } from '../src/plan/patch/assemble.js';
import type { Plan } from '../src/plan/types.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import { specText } from './windows/fixtures.js';
import { Positions } from './trace/positions.js';
import { examplePlan, traceExample } from './trace/run-trace.js';
import { lintPowerShell, parseErrors } from './windows/powershell.js';

const windowsNode = (plan: Plan): string => plan.nodes.find((n) => n.osFamily === 'windows')?.name ?? assert.fail();
const onWindows = (plan: Plan) => {
  const win = windowsNode(plan);
  return plan.tasks.filter((t) => t.host === win);
};
const scripts = (tasks: Plan['tasks']): string[] =>
  tasks.flatMap((t) => [t.check?.script ?? '', t.apply.script]).filter((s) => s !== '');

function assertPowerShellClean(tasks: Plan['tasks']): void {
  for (const t of tasks)
    for (const c of [t.check, t.apply])
      if (c?.shell === 'powershell') {
        assert.deepEqual(parseErrors(c.script), [], t.id);
        assert.deepEqual(lintPowerShell(c.script), [], t.id);
      }
}

describe('upgrade of examples/calico-mixed.yaml (Calico, one Windows 2022 worker)', () => {
  const { plan } = examplePlan('calico-mixed', 'upgrade');
  const win = windowsNode(plan);
  const binaries = plan.tasks.find((t) => t.host === win && t.name === 'win-upgrade-binaries') ?? assert.fail();
  const apply = binaries.apply.script;

  it('never stops, starts or names flanneld on the Windows node', () => {
    for (const s of scripts(onWindows(plan))) assert.doesNotMatch(s, /flanneld/i);
    assert.doesNotMatch(binaries.description, /flannel/i);
  });
  it('restarts containerd → kubelet, ends the kube-proxy pod on the old binary, then waits for Calico_ep', () => {
    const starts = [...apply.matchAll(/Start-Service -Name '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(starts, ['containerd', 'kubelet']);
    const stops = [...apply.matchAll(/Stop-KubemixService -Name '([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual(stops, ['kubelet', 'containerd']);
    const at = (needle: string): number => {
      const i = apply.indexOf(needle);
      assert.ok(i >= 0, `${needle} missing`);
      return i;
    };
    const kubelet = at("Start-Service -Name 'kubelet'");
    const restart = at('Stop-Process -Force');
    const wait = at(`calico-node-windows did not create the HNS network ${CALICO_WINDOWS.network}`);
    assert.ok(
      kubelet < restart && restart < wait,
      'kubelet → kube-proxy pod restarted on the new binary → Calico wait',
    );
    assert.match(apply, new RegExp(`\\$_\\.Name -eq '${CALICO_WINDOWS.hostEndpoint}'`));
    // The check holds only while Calico's network and endpoint are there too.
    assert.match(binaries.check?.script ?? '', /Get-KubemixCalicoEndpoint/);
    assert.match(
      binaries.description,
      new RegExp(`kubelet → HNS network Calico and endpoint ${CALICO_WINDOWS.hostEndpoint} back`),
    );
    assert.ok(binaries.timeoutSeconds > 900, 'room for the Calico wait');
  });
  it('the add-ons re-apply the Tigera operator and nothing flannel-specific', () => {
    const api = plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
    const operator = plan.tasks.find((t) => t.id === `task-deploy-cluster/${api}/calico-operator`);
    assert.ok(operator !== undefined, 'the operator is re-applied with Windows workers too');
    const addons = plan.tasks.find((t) => t.name === 'upgrade-addons') ?? assert.fail();
    assert.deepEqual(addons.after, [operator.id]);
    assert.doesNotMatch(addons.apply.script, /flannel/);
    // The kube-proxy HostProcess DaemonSet is kubemix's on Calico too.
    assert.match(addons.apply.script, /windows-hostprocess\.yaml/);
    for (const a of plan.artifacts.filter((x) => x.node === 'cluster')) assert.doesNotMatch(a.remotePath, /flannel/);
  });
  it('after the operator and the Installation, waits for calico-node and calico-node-windows before any worker', () => {
    const api = plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
    const id = (name: string) => `task-deploy-cluster/${api}/${name}`;
    const rollout = plan.tasks.find((t) => t.id === id('upgrade-calico-rollout')) ?? assert.fail('no rollout wait');
    assert.deepEqual(rollout.after, [id('upgrade-addons')]);
    assert.deepEqual(plan.tasks.find((t) => t.id === id('upgrade-guard'))?.after, [rollout.id]);
    // The operator's own word that it runs the new version, then each DaemonSet rolled out.
    const script = rollout.apply.script;
    const at = (needle: string) => script.indexOf(needle);
    assert.match(
      script,
      new RegExp(`\\{\\.status\\.calicoVersion\\}'\\)" = 'v${CALICO.version.replaceAll('.', '\\.')}'`),
    );
    assert.ok(at('calicoVersion') < at('rollout status daemonset/calico-node '));
    assert.ok(at('daemonset/calico-node ') < at(`daemonset/${CALICO_WINDOWS_DAEMONSET} `));
    assert.match(rollout.check?.script ?? '', /rollout status daemonset\/calico-node-windows --timeout=10s/);
    // Every path to the Windows worker's cordon passes through it.
    const byId = new Map(plan.tasks.map((t) => [t.id, t]));
    const ancestors = (start: string): Set<string> => {
      const seen = new Set<string>();
      const walk = (x: string): void => {
        for (const d of byId.get(x)?.after ?? [])
          if (!seen.has(d)) {
            seen.add(d);
            walk(d);
          }
      };
      walk(start);
      return seen;
    };
    assert.ok(ancestors(id(`upgrade-cordon-${win}`)).has(rollout.id));
    const linuxOnly = examplePlan('calico-libvirt-1-1-1', 'upgrade').plan;
    const only = linuxOnly.tasks.find((t) => t.name === 'upgrade-calico-rollout') ?? assert.fail();
    assert.doesNotMatch(only.apply.script, /calico-node-windows/);
  });
  it('every PowerShell script of the Windows node parses and passes our rules', () => {
    assertPowerShellClean(onWindows(plan));
  });
  it('the executor runs it: the Calico restart after the drain, no flanneld in any command the node received', async () => {
    const trace = await traceExample('calico-mixed', 'plan-order', 'upgrade');
    try {
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      const sent = trace.steps.filter((s) => s.host === win && s.script !== undefined);
      assert.ok(sent.some((s) => s.task === binaries.id && s.script?.includes('Get-KubemixCalicoEndpoint')));
      for (const s of sent) assert.doesNotMatch(s.script ?? '', /flanneld/i, s.task);
      const at = new Positions(trace);
      const api = trace.plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
      assert.ok(at.first(binaries.id) > at.last(`task-deploy-cluster/${api}/upgrade-drain-${win}`));
    } finally {
      rmSync(trace.stateDir, { recursive: true, force: true });
    }
  });
});

describe('patch of examples/calico-mixed.yaml', () => {
  const { plan } = examplePlan('calico-mixed', 'patch');
  const network = onWindows(plan).find((t) => t.name === 'win-pod-network') ?? assert.fail();

  it("after the reboot, waits for Calico's network, endpoint and CNI config; never for flanneld", () => {
    for (const s of scripts(onWindows(plan))) assert.doesNotMatch(s, /flanneld/i);
    for (const s of [network.check?.script ?? '', network.apply.script]) {
      assert.match(s, new RegExp(`Get-KubemixHnsNetwork -Name '${CALICO_WINDOWS.network}'`));
      assert.match(s, /Get-KubemixCalicoEndpoint/);
      assert.match(s, new RegExp(CALICO_WINDOWS.cniConfName.replaceAll('.', '\\.')));
    }
    assert.match(network.apply.script, /calico-node-windows has not rebuilt the HNS network Calico/);
    assert.match(network.description, /calico-node-windows rebuilt the HNS network Calico/);
    const updates = onWindows(plan).find((t) => t.name === 'win-updates') ?? assert.fail();
    assert.deepEqual(network.after?.length, 1);
    assert.ok(updates.reboots);
    assertPowerShellClean(onWindows(plan));
  });
  it('the executor runs it through the reboot to the Calico wait and the uncordon', async () => {
    const trace = await traceExample('calico-mixed', 'plan-order', 'patch');
    try {
      assert.equal(trace.result.counts.done, trace.plan.tasks.length);
      const at = new Positions(trace);
      const win = windowsNode(trace.plan);
      const api = trace.plan.nodes.find((n) => n.role === 'control-plane')?.name ?? '';
      assert.ok(at.first(network.id) > at.last(`task-deploy-cluster/${win}/win-updates`));
      assert.ok(at.first(`task-deploy-cluster/${api}/patch-uncordon-${win}`) > at.last(network.id));
    } finally {
      rmSync(trace.stateDir, { recursive: true, force: true });
    }
  });
});

describe("flannel examples keep flannel: the flanneld pod's network is waited for, not a flanneld service", () => {
  it('k8s-libvirt-3-2-1 (the default image): waits for the HNS network only', () => {
    const { plan } = examplePlan('k8s-libvirt-3-2-1', 'patch');
    const network = onWindows(plan).find((t) => t.name === 'win-pod-network') ?? assert.fail();
    assert.doesNotMatch(`${network.check?.script ?? ''}${network.apply.script}`, /Get-Service -Name 'flanneld'|Calico/);
    assert.match(network.apply.script, /Get-KubemixHnsNetwork -Name 'flannel\.\d+'/);
  });
  it("the spec's own HostProcess images (a pod, no flanneld service): waits for the HNS network only", () => {
    const text = `${specText({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' })}  windows:
    hostProcess:
      flannelImage: registry.example.com/flannel:v0.28.4-hostprocess
      kubeProxyImage: registry.example.com/kube-proxy:v1.36.2-hostprocess
`;
    const model = resolveModel(readSpec({ kind: 'file', path: 'hostprocess.yaml', text }));
    const plan = assemblePatchPlan(model, { kbs: [], securityOnly: false, maxUnavailable: 1 }).plan;
    const network = plan.tasks.find((t) => t.name === 'win-pod-network') ?? assert.fail();
    assert.doesNotMatch(`${network.check?.script ?? ''}${network.apply.script}`, /flanneld/);
    assert.match(network.apply.script, /Get-KubemixHnsNetwork -Name 'flannel\.\d+'/);
    assertPowerShellClean(plan.tasks);
  });
});

describe('diagnose on a Calico Windows worker', () => {
  const { plan } = examplePlan('calico-mixed', 'up');
  const path = repoPath('examples', 'calico-mixed.yaml');
  const model = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
  const win = windowsNode(plan);

  it("collects Calico's CNI config and no flannel sections; the script parses and passes our rules", () => {
    const sections = windowsSections(model);
    const names = sections.map((s) => s.name);
    for (const flannel of ['flanneld-log', 'subnet-env', 'net-conf']) assert.ok(!names.includes(flannel), flannel);
    const cni = sections.find((s) => s.name === 'cni-config') ?? assert.fail();
    assert.match(cni.command, new RegExp(`\\\\${CALICO_WINDOWS.cniConfName.replaceAll('.', '\\.')}'$`));
    for (const s of sections) assert.doesNotMatch(s.command, /flanneld/);
    const task = assembleDiagnosePlan(model, diagnosedNodes(model, [win])).plan.tasks[0] ?? assert.fail();
    assert.deepEqual(parseErrors(task.apply.script), []);
    assert.deepEqual(lintPowerShell(task.apply.script), []);
  });
  it('a stopped service and a NotReady CNI name Calico’s order and pods, not flanneld', () => {
    const node = { name: win, osFamily: 'windows', role: 'worker' } as const;
    const sections = new Map([
      ['services', 'containerd Running\nkubelet Running\nkube-proxy Stopped'],
      ['kubelet-log', 'E1124 kubelet.go:3000] "Container runtime network not ready" err="cni plugin not initialized"'],
    ]);
    const found = matchSignatures(model.cluster, [{ node, sections }]);
    const down = found.find((f) => f.id === 'service-down') ?? assert.fail(JSON.stringify(found));
    assert.match(down.next, /containerd, kubelet \(it runs calico-node-windows\), kube-proxy/);
    const cni = found.find((f) => f.id === 'cni-not-ready') ?? assert.fail(JSON.stringify(found));
    assert.match(cni.next, /calico-node-windows/);
    for (const f of found) assert.doesNotMatch(f.next, /flanneld/);
  });
});
