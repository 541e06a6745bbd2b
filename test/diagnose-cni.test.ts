// kubemix diagnose for pod networks that run as pods: Calico (calico-node,
// calico-node-windows, TigeraStatus, Calico's HNS network, host endpoint and
// 10-calico.conflist) and HostProcess flannel (flanneld and kube-proxy as
// pods on Windows). What is collected, that the scripts parse (PowerShell) or
// run (sh, for real, in a private network namespace and on a pod-log tree the
// test makes), and the signatures on samples: kubectl tables as kubectl's
// tabwriter prints them (`get pods -A -o wide`, `get tigerastatus`), HNS
// objects as Get-HnsNetwork / Get-HnsEndpoint return them, Get-Content's
// error for a missing file.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linuxPodLogs } from '../src/diagnose/cni-sections.js';
import { assembleDiagnosePlan, diagnosedNodes } from '../src/diagnose/plan.js';
import { collectScript, linuxSections, splitSections, windowsSections } from '../src/diagnose/sections.js';
import { matchSignatures, type DiagnosedCluster, type NodeSections } from '../src/diagnose/signatures.js';
import { readTable } from '../src/diagnose/tables.js';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import { specText } from './windows/fixtures.js';
import { lintPowerShell, parseErrors } from './windows/powershell.js';

const calicoModel = resolveModel(
  readSpec({
    kind: 'file',
    path: 'calico-mixed.yaml',
    text: readFileSync(repoPath('examples', 'calico-mixed.yaml'), 'utf8'),
  }),
);
const hostProcessModel = resolveModel(
  readSpec({
    kind: 'file',
    path: 'hostprocess.yaml',
    text: `${specText({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' })}  windows:
    hostProcess:
      flannelImage: registry.example.com/flannel:v0.28.4-hostprocess
      kubeProxyImage: registry.example.com/kube-proxy:v1.36.2-hostprocess
`,
  }),
);
const node = (model: typeof calicoModel, f: (n: (typeof calicoModel.nodes)[number]) => boolean) =>
  model.nodes.find(f) ?? assert.fail('no such node');

/** `kubectl get pods -A -o wide` as kubectl prints it (tabwriter, 3 spaces of padding). */
function podsTable(rows: readonly (readonly string[])[]): string {
  const header = ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE'];
  const all = [header, ...rows.map((r) => [...r, '<none>'])];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((c, i) => c.padEnd((widths[i] ?? 0) + 3))
        .join('')
        .trimEnd(),
    )
    .join('\n');
}

const wideRow = (ns: string, name: string, ready: string, status: string, restarts: string, nodeName: string) => [
  ns,
  name,
  ready,
  status,
  restarts,
  '2d',
  '10.0.0.21',
  nodeName,
];

describe('kubectl tables are read by column, not by whitespace', () => {
  it('RESTARTS with its "(2m ago)" and the two-word header keep every column in place', () => {
    const rows = readTable(
      podsTable([
        wideRow('calico-system', 'calico-node-windows-7xk2p', '1/2', 'CrashLoopBackOff', '7 (2m ago)', 'wincompute-01'),
        wideRow('calico-system', 'calico-node-q8fzt', '1/1', 'Running', '0', 'controller-01'),
      ]),
    );
    assert.deepEqual(
      rows.map((r) => [r['NAME'], r['READY'], r['STATUS'], r['RESTARTS'], r['NODE'], r['NOMINATED NODE']]),
      [
        ['calico-node-windows-7xk2p', '1/2', 'CrashLoopBackOff', '7 (2m ago)', 'wincompute-01', '<none>'],
        ['calico-node-q8fzt', '1/1', 'Running', '0', 'controller-01', '<none>'],
      ],
    );
  });
});

describe('diagnose collects Calico', () => {
  const cp = node(calicoModel, (n) => n.role === 'control-plane');
  const win = node(calicoModel, (n) => n.osFamily === 'windows');
  const names = (s: readonly { name: string }[]) => s.map((x) => x.name);

  it("Linux: calico-node's log and vxlan.calico, no flannel; the first control plane: TigeraStatus and the pods' logs", () => {
    const own = linuxSections(calicoModel, cp, false);
    assert.ok(names(own).includes('calico-node-log'));
    assert.ok(!names(own).includes('subnet-env'));
    assert.equal(own.find((s) => s.name === 'vxlan-link')?.command.text, 'ip -d link show vxlan.calico');
    const api = linuxSections(calicoModel, cp, true);
    assert.ok(!names(api).includes('flannel-log'));
    assert.equal(api.find((s) => s.name === 'calico-status')?.command.text.endsWith('get tigerastatus'), true);
    const logs = api.find((s) => s.name === 'calico-log')?.command.text ?? '';
    assert.match(logs, /-n calico-system logs -l k8s-app=calico-node -c calico-node/);
    assert.match(logs, /-l k8s-app=calico-node-windows --all-containers/);
    for (const section of api) {
      const r = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], {
        input: section.command.text,
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, `${section.name}: ${r.stdout}`);
    }
  });
  it("Windows: calico-node-windows' pod log, the CNI plugin log and 10-calico.conflist; the script parses", () => {
    const sections = windowsSections(calicoModel);
    assert.ok(names(sections).includes('calico-node-log') && names(sections).includes('calico-cni-log'));
    assert.match(
      sections.find((s) => s.name === 'calico-node-log')?.command ?? '',
      /'calico-system_calico-node-windows-\*'/,
    );
    assert.match(sections.find((s) => s.name === 'cni-config')?.command ?? '', /10-calico\.conflist'$/);
    const task = assembleDiagnosePlan(calicoModel, diagnosedNodes(calicoModel, [win.name])).plan.tasks[0];
    assert.deepEqual(parseErrors(task?.apply.script ?? ''), []);
    assert.deepEqual(lintPowerShell(task?.apply.script ?? ''), []);
  });
  it("the pod-log reader, run for real on a kubelet pod-log tree, prints each container's newest log only", () => {
    const root = mkdtempSync(join(tmpdir(), 'kubemix-podlogs-'));
    try {
      const dir = join(root, 'calico-system_calico-node-q8fzt_0f1e2d3c', 'calico-node');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, '0.log'), '2026-11-24T09:00:00.000Z stdout F old restart\n');
      execFileSync('touch', ['-d', '2026-11-24 09:00', join(dir, '0.log')]);
      writeFileSync(
        join(dir, '1.log'),
        '2026-11-24T10:00:00.000Z stdout F felix/health.go 167: Health of component changed\n',
      );
      mkdirSync(join(root, 'kube-system_kube-proxy-abcde_99', 'kube-proxy'), { recursive: true });
      writeFileSync(join(root, 'kube-system_kube-proxy-abcde_99', 'kube-proxy', '0.log'), 'not calico\n');
      const out = execFileSync('sh', ['-c', linuxPodLogs('calico-system', 'calico-node-', 100, root).text], {
        encoding: 'utf8',
      });
      assert.match(out, /# .*calico-node\/1\.log\n.*Health of component changed/);
      assert.doesNotMatch(out, /old restart|not calico/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  it('the collection script in a private network namespace with a wrong vxlan.calico names the mismatch and Felix', (t) => {
    const script = collectScript('sh', linuxSections(calicoModel, cp, false));
    let text: string;
    try {
      text = execFileSync(
        'unshare',
        ['-n', 'sh', '-c', `ip link add vxlan.calico type vxlan id 1 dstport 8472 local 127.0.0.1\n${script}`],
        { encoding: 'utf8', timeout: 30_000 },
      );
    } catch (error) {
      t.skip(`unshare -n is not available here: ${String(error)}`);
      return;
    }
    const sections = splitSections(text);
    const findings = matchSignatures(calicoModel.cluster, [{ node: cp, sections }]);
    const f = findings.find((x) => x.id === 'vxlan-mismatch') ?? assert.fail(JSON.stringify(findings));
    assert.match(f.evidence, /VNI 1, port 8472/);
    assert.match(f.next, /FelixConfiguration default/);
  });
});

describe('diagnose signatures for Calico', () => {
  const cluster = calicoModel.cluster;
  const cp = { name: 'controller-01', osFamily: 'linux', role: 'control-plane' } as const;
  const win = { name: 'wincompute-01', osFamily: 'windows', role: 'worker' } as const;
  const healthyPods = [
    wideRow('calico-system', 'calico-node-q8fzt', '1/1', 'Running', '0', 'controller-01'),
    wideRow('calico-system', 'calico-node-windows-7xk2p', '2/2', 'Running', '1 (3d ago)', 'wincompute-01'),
    wideRow('calico-system', 'calico-typha-5d8c9-x2x7s', '1/1', 'Running', '0', 'controller-01'),
  ];
  const STATUS = `NAME        AVAILABLE   PROGRESSING   DEGRADED   SINCE
apiserver   True        False         False      2d
calico      True        False         False      2d`;
  const api = (over: Record<string, string> = {}): NodeSections => ({
    node: cp,
    sections: new Map(Object.entries({ 'cluster-pods': podsTable(healthyPods), 'calico-status': STATUS, ...over })),
  });
  // Get-HnsNetwork / Get-HnsEndpoint objects (HNS's JSON: Name, Type, VirtualNetworkName, IPAddress …).
  const NETWORKS = JSON.stringify([
    { ID: 'A1', Name: 'External', Type: 'L2Bridge' },
    { ID: 'B2', Name: 'Calico', Type: 'Overlay', Subnets: [{ AddressPrefix: '10.244.10.0/26' }] },
  ]);
  const ENDPOINTS = JSON.stringify([
    { ID: 'E1', Name: 'Calico_ep', VirtualNetworkName: 'Calico', IPAddress: '10.244.10.2' },
    { ID: 'E2', Name: 'a1b2c3_eth0', VirtualNetworkName: 'Calico', IPAddress: '10.244.10.5' },
  ]);
  const windows = (over: Record<string, string> = {}): NodeSections => ({
    node: win,
    sections: new Map(
      Object.entries({
        services: 'containerd Running\nkubelet Running\nkube-proxy Running',
        'hns-networks': NETWORKS,
        'hns-endpoints': ENDPOINTS,
        'hns-policylists': '',
        'hns-loadbalancers':
          'Load Balancer : 1\n  Virtual IPs : 10.96.0.1\nLoad Balancer : 2\n  Virtual IPs : 10.96.0.10',
        'cni-config': '{"name":"Calico","cniVersion":"1.0.0","plugins":[{"type":"calico"}]}',
        ...over,
      }),
    ),
  });
  const ids = (nodes: NodeSections[]) => matchSignatures(cluster, nodes).map((f) => `${f.node}:${f.id}`);

  it('a healthy Calico cluster matches nothing', () => {
    assert.deepEqual(ids([api(), windows()]), []);
  });
  it('calico-node-windows crash-looping: named on its own node, with its log to read', () => {
    const pods = podsTable([
      ...healthyPods.slice(0, 1),
      wideRow('calico-system', 'calico-node-windows-7xk2p', '1/2', 'CrashLoopBackOff', '7 (2m ago)', 'wincompute-01'),
    ]);
    const f = matchSignatures(cluster, [api({ 'cluster-pods': pods }), windows()]);
    assert.deepEqual(
      f.map((x) => `${x.node}:${x.id}`),
      ['wincompute-01:calico-not-ready'],
    );
    assert.match(f[0]?.evidence ?? '', /calico-node-windows-7xk2p 1\/2 CrashLoopBackOff restarts 7 \(2m ago\)/);
    assert.match(f[0]?.next ?? '', /wincompute-01\/calico-node-log\.txt/);
    // Running but not ready (felix failing its readiness probe) counts too.
    const unready = podsTable([wideRow('calico-system', 'calico-node-q8fzt', '0/1', 'Running', '0', 'controller-01')]);
    assert.deepEqual(ids([api({ 'cluster-pods': unready })]), ['controller-01:calico-not-ready']);
  });
  it('TigeraStatus calico degraded', () => {
    const status = `${STATUS.split('\n').slice(0, 2).join('\n')}\ncalico      False       True          True       31s`;
    const f = matchSignatures(cluster, [api({ 'calico-status': status })]);
    assert.deepEqual(
      f.map((x) => x.id),
      ['calico-not-ready'],
    );
    assert.match(f[0]?.evidence ?? '', /tigerastatus calico: available False, degraded True/);
  });
  it('the Calico network without Calico_ep: kube-proxy has no source VIP', () => {
    const f = matchSignatures(cluster, [
      api(),
      windows({ 'hns-endpoints': JSON.stringify([JSON.parse(ENDPOINTS)[1]]) }),
    ]);
    assert.deepEqual(
      f.map((x) => x.id),
      ['calico-endpoint-missing'],
    );
    assert.match(
      f[0]?.next ?? '',
      /delete pod -l k8s-app=calico-node-windows --field-selector spec\.nodeName=wincompute-01/,
    );
    assert.match(f[0]?.next ?? '', /delete the kube-proxy-windows pod on /);
  });
  it("10-calico.conflist missing (Get-Content's error) and the kubelet without CNI", () => {
    const missing =
      "Get-Content : Cannot find path 'C:\\etc\\cni\\net.d\\10-calico.conflist' because it does not exist.\nAt line:1 char:1";
    const kubelet =
      'E1124 10:00:00 kubelet.go:3000] "Container runtime network not ready" err="cni plugin not initialized"';
    const f = ids([
      api(),
      windows({
        'cni-config': missing,
        'kubelet-log': kubelet,
        'hns-networks': JSON.stringify([JSON.parse(NETWORKS)[0]]),
      }),
    ]);
    assert.deepEqual(f.sort(), [
      'wincompute-01:calico-cni-config-missing',
      'wincompute-01:cni-not-ready',
      'wincompute-01:hns-network-missing',
    ]);
  });
});

describe('diagnose for HostProcess flannel (flanneld and kube-proxy as pods on Windows)', () => {
  const cluster: DiagnosedCluster = { ...hostProcessModel.cluster, windowsHostProcess: true };
  const cpNode = node(hostProcessModel, (n) => n.role === 'control-plane');
  const winNode = node(hostProcessModel, (n) => n.osFamily === 'windows');
  const cp = { name: cpNode.name, osFamily: 'linux', role: 'control-plane' } as const;
  const win = { name: winNode.name, osFamily: 'windows', role: 'worker' } as const;
  const registered = win.name.toLowerCase();
  const pods = (proxy: [string, string], linuxFlannel: [string, string] | null) =>
    podsTable([
      ...(linuxFlannel === null
        ? []
        : [wideRow('kube-flannel', 'kube-flannel-ds-7xq2m', linuxFlannel[0], linuxFlannel[1], '3 (20s ago)', cp.name)]),
      wideRow('kube-flannel', 'kube-flannel-ds-windows-4kq9z', '1/1', 'Running', '0', registered),
      wideRow('kube-system', 'kube-proxy-windows-m2x8d', proxy[0], proxy[1], '4 (1m ago)', registered),
    ]);
  const SERVICES = `NAMESPACE     NAME         TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE   SELECTOR
default       kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   2d    <none>`;
  const api = (proxy: [string, string], linuxFlannel?: [string, string] | null): NodeSections => ({
    node: cp,
    sections: new Map([
      ['cluster-pods', pods(proxy, linuxFlannel === undefined ? ['1/1', 'Running'] : linuxFlannel)],
      ['cluster-services', SERVICES],
    ]),
  });
  const network = `flannel.${hostProcessModel.overlay.vxlan?.vni ?? 4096}`;
  const windows = (over: Record<string, string> = {}): NodeSections => ({
    node: win,
    sections: new Map(
      Object.entries({
        services: 'containerd Running\nkubelet Running',
        'hns-networks': JSON.stringify([{ Name: 'External' }, { Name: network, Type: 'Overlay' }]),
        'hns-policylists': JSON.stringify([{ ID: 'p1', Policies: [{ Type: 'ELB', VIPs: ['10.96.0.1'] }] }]),
        'hns-loadbalancers': '',
        ...over,
      }),
    ),
  });

  it("collects the pods' logs instead of service logs, no flanneld or kube-proxy service; the script parses", () => {
    const sections = windowsSections(hostProcessModel);
    const names = sections.map((s) => s.name);
    for (const gone of ['flanneld-log', 'kube-proxy-log']) assert.ok(!names.includes(gone), gone);
    for (const here of ['flannel-pod-log', 'kube-proxy-pod-log', 'subnet-env', 'net-conf'])
      assert.ok(names.includes(here), here);
    assert.match(
      sections.find((s) => s.name === 'services')?.command ?? '',
      /^Get-Service -Name 'containerd', 'kubelet' /,
    );
    assert.match(
      sections.find((s) => s.name === 'flannel-pod-log')?.command ?? '',
      /'kube-flannel_kube-flannel-ds-windows-\*'/,
    );
    const api = linuxSections(hostProcessModel, cpNode, true);
    assert.match(api.find((s) => s.name === 'flannel-log')?.command.text ?? '', /logs -l app=kube-flannel-ds-windows/);
    assert.match(
      api.find((s) => s.name === 'kube-proxy-windows-log')?.command.text ?? '',
      /logs -l app=kube-proxy-windows/,
    );
    const task = assembleDiagnosePlan(hostProcessModel, [winNode]).plan.tasks[0];
    assert.deepEqual(parseErrors(task?.apply.script ?? ''), []);
    assert.deepEqual(lintPowerShell(task?.apply.script ?? ''), []);
  });
  it('healthy: nothing, though no flanneld or kube-proxy service exists', () => {
    assert.deepEqual(matchSignatures(cluster, [api(['1/1', 'Running']), windows()]), []);
  });
  it("kube-proxy's pod crash-looping: hostprocess-pod-down, and no load balancer finding without a running kube-proxy", () => {
    const f = matchSignatures(cluster, [api(['0/1', 'CrashLoopBackOff']), windows()]);
    assert.deepEqual(
      f.map((x) => x.id),
      ['hostprocess-pod-down'],
    );
    assert.match(f[0]?.evidence ?? '', /kube-proxy-windows-m2x8d 0\/1 CrashLoopBackOff/);
  });
  it('flanneld not running on a Linux node: flannel-pod-down names it, with the next step; the Windows pods are not it', () => {
    const crashing = matchSignatures(cluster, [api(['1/1', 'Running'], ['0/1', 'CrashLoopBackOff']), windows()]);
    assert.deepEqual(
      crashing.map((x) => `${x.node}:${x.id}`),
      [`${cp.name}:flannel-pod-down`],
    );
    assert.match(crashing[0]?.evidence ?? '', /kube-flannel-ds-7xq2m 0\/1 CrashLoopBackOff/);
    assert.match(crashing[0]?.next ?? '', /kubectl -n kube-flannel logs kube-flannel-ds-7xq2m --previous/);
    const gone = matchSignatures(cluster, [api(['1/1', 'Running'], null), windows()]);
    assert.deepEqual(
      gone.map((x) => `${x.node}:${x.id}`),
      [`${cp.name}:flannel-pod-down`],
    );
    assert.match(gone[0]?.evidence ?? '', /no kube-flannel\/kube-flannel-ds pod on the node/);
    assert.match(gone[0]?.next ?? '', /NoExecute taint/);
  });
  it('a Service without its load balancer while the kube-proxy pod runs: delete that pod, not Restart-Service', () => {
    const f = matchSignatures(cluster, [api(['1/1', 'Running']), windows({ 'hns-policylists': '[]' })]);
    const lb = f.find((x) => x.id === 'hns-lb-missing') ?? assert.fail(JSON.stringify(f));
    assert.match(lb.next, /delete the kube-proxy-windows pod/);
  });
  it('cni-not-ready, the network missing and a stopped kubelet name the HostProcess pods, never a flanneld service', () => {
    const kubelet = 'E1124 kubelet.go:3000] "Container runtime network not ready" err="cni plugin not initialized"';
    const f = matchSignatures(cluster, [
      api(['1/1', 'Running']),
      windows({
        'kubelet-log': kubelet,
        services: 'containerd Running\nkubelet Stopped',
        'hns-networks': JSON.stringify([{ Name: 'External' }]),
      }),
    ]);
    assert.deepEqual(f.map((x) => x.id).sort(), ['cni-not-ready', 'hns-network-missing', 'service-down']);
    const by = (id: string) => f.find((x) => x.id === id)?.next ?? '';
    assert.match(by('cni-not-ready'), /HostProcess pod of DaemonSet kube-flannel\/kube-flannel-ds-windows/);
    assert.match(by('hns-network-missing'), /delete pod -l app=kube-flannel-ds-windows/);
    assert.match(by('service-down'), /containerd, kubelet \(it runs the flannel and kube-proxy HostProcess pods\)/);
    for (const x of f) assert.doesNotMatch(x.next, /flanneld service|Restart-Service flanneld/);
  });
});
