// kubemix diagnose: redaction, the section round trip, and the failure
// signatures on collected material — real Linux output (the collection
// script run in a private network namespace holding an injected wrong VXLAN
// link) and Windows output shaped after the upstream documentation of the
// HNS calls, hnsdiag, Get-Service and Get-HotFix.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { assembleDiagnosePlan, diagnosedNodes } from '../src/diagnose/plan.js';
import { redactText } from '../src/diagnose/redact.js';
import {
  collectScript,
  linuxSections,
  servicesSections,
  splitSections,
  windowsSections,
} from '../src/diagnose/sections.js';
import { matchSignatures, type NodeSections } from '../src/diagnose/signatures.js';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath, runCli } from './helpers/cli.js';
import { lintPowerShell, parseErrors } from './windows/powershell.js';

const spec = readFileSync(repoPath('examples', 'k8s-libvirt-1-1-1.yaml'), 'utf8');
const model = resolveModel(readSpec({ kind: 'file', path: 'k8s-libvirt-1-1-1.yaml', text: spec }));
const cluster = model.cluster;
const win = { name: 'compute-01', osFamily: 'windows', role: 'worker' } as const;
const cp = { name: 'controller-01', osFamily: 'linux', role: 'control-plane' } as const;

const SERVICES_TABLE = `NAMESPACE     NAME         TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)                  AGE   SELECTOR
default       kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP                  2d    <none>
kube-system   kube-dns     ClusterIP   10.96.0.10   <none>        53/UDP,53/TCP,9153/TCP   2d    k8s-app=kube-dns`;
const NETWORKS = JSON.stringify([
  { ActivityId: 'A', Name: 'External', Type: 'Overlay', Subnets: [{ AddressPrefix: '192.168.255.0/30' }] },
  { ActivityId: 'B', Name: 'flannel.4096', Type: 'Overlay', Subnets: [{ AddressPrefix: '10.244.1.0/24' }] },
]);
const POLICIES = JSON.stringify([
  { ID: 'p1', Policies: [{ Type: 'ELB', VIPs: ['10.96.0.1'], Protocol: 6, InternalPort: 6443, ExternalPort: 443 }] },
]);
const HOTFIXES = 'KB5040437 Security Update 2024-07-09\nKB5039227 Update 2024-06-11';

function windowsNode(over: Record<string, string>): NodeSections {
  const base: Record<string, string> = {
    services: 'containerd Running\nflanneld Running\nkubelet Running\nkube-proxy Running',
    'hns-networks': NETWORKS,
    'hns-policylists': JSON.stringify([
      ...JSON.parse(POLICIES),
      { ID: 'p2', Policies: [{ Type: 'ELB', VIPs: ['10.96.0.10'] }] },
    ]),
    'hns-loadbalancers': '',
    hotfixes: HOTFIXES,
    'net-conf': '{"Network":"10.244.0.0/16","Backend":{"Type":"vxlan","VNI":4096,"Port":4789}}',
    'subnet-env': 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450',
  };
  return { node: win, sections: new Map(Object.entries({ ...base, ...over })) };
}
const apiNode: NodeSections = { node: cp, sections: new Map([['cluster-services', SERVICES_TABLE]]) };
const ids = (nodes: NodeSections[]): string[] => matchSignatures(cluster, nodes).map((f) => `${f.node}:${f.id}`);

describe('diagnose redaction', () => {
  it('removes keys, tokens and the secret store values; keeps addresses and names', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXZhbHVl';
    const text = `-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----
Authorization: Bearer abcdefgh12345678
token: ${jwt}
kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef
client-key-data: LS0tLS1CRUdJTg==
"password": "hunter2-xyz"
registry secret is s3cr3t-VALUE here
flanneld: 10.96.0.1 node compute-01 ok`;
    const out = redactText(text, [['registry-password', 's3cr3t-VALUE']]);
    for (const gone of [
      'MIIEabc',
      'abcdefgh12345678',
      jwt,
      'abcdef.0123456789abcdef',
      'LS0tLS1CRUdJTg',
      'hunter2',
      's3cr3t-VALUE',
    ])
      assert.ok(!out.includes(gone), `${gone} survived:\n${out}`);
    assert.match(out, /<redacted:registry-password>/);
    assert.match(out, /flanneld: 10\.96\.0\.1 node compute-01 ok/);
  });
});

describe('diagnose signatures on Windows samples', () => {
  it('a healthy node matches nothing', () => {
    assert.deepEqual(ids([apiNode, windowsNode({})]), []);
  });
  it('a credential past its end, and one about to be, from the credentials section', () => {
    const credentials =
      'KUBEMIX-PROBE credential pod-token kube-system/flannel-windows-x/kube-api-access-q 3607 -600\n' +
      'KUBEMIX-PROBE credential kubelet-client kubelet-client-current.pem 31536000 86400\n' +
      'KUBEMIX-PROBE credentials 2\n';
    const f = matchSignatures(cluster, [apiNode, windowsNode({ credentials })]);
    const expired = f.find((x) => x.id === 'credential-expired') ?? assert.fail();
    assert.match(expired.evidence, /flannel-windows-x\/kube-api-access-q expired 10 min ago/);
    assert.match(expired.next, /the kubelet renews a pod's projected token/);
    const expiring = f.find((x) => x.id === 'credential-expiring') ?? assert.fail();
    assert.match(expiring.evidence, /kubelet-client-current\.pem \(kubelet-client\) expires in 24\.0 h/);
  });
  it('HNS network missing after an update: names the KB, the wusa rollback and Windows-Containers#516', () => {
    const nodes = [apiNode, windowsNode({ 'hns-networks': JSON.stringify([JSON.parse(NETWORKS)[0]]) })];
    const f = matchSignatures(cluster, nodes).find((x) => x.id === 'hns-network-missing') ?? assert.fail();
    assert.match(f.cause, /flannel\.4096 does not exist.*KB5040437/);
    assert.match(f.next, /wusa \/uninstall \/kb:5040437/);
    assert.equal(f.reference, 'microsoft/Windows-Containers#516');
  });
  it('with Calico the network to look for is Calico, recreated by calico-node-windows', () => {
    const calico = { ...cluster, cni: { ...cluster.cni, plugin: 'calico' as const } };
    const calicoNet = JSON.stringify([...JSON.parse(NETWORKS), { Name: 'Calico', Type: 'Overlay' }]);
    assert.ok(
      !matchSignatures(calico, [apiNode, windowsNode({ 'hns-networks': calicoNet })]).some(
        (x) => x.id === 'hns-network-missing',
      ),
    );
    const f =
      matchSignatures(calico, [apiNode, windowsNode({ 'hns-networks': NETWORKS })]).find(
        (x) => x.id === 'hns-network-missing',
      ) ?? assert.fail();
    assert.match(f.cause, /HNS network Calico does not exist/);
    assert.match(f.next, /calico-node-windows pod/);
    assert.doesNotMatch(f.next, /flanneld/);
  });
  it('a Service without its HNS load balancer while kube-proxy runs (kubernetes#135802)', () => {
    const f = matchSignatures(cluster, [apiNode, windowsNode({ 'hns-policylists': POLICIES })]);
    assert.deepEqual(
      f.map((x) => x.id),
      ['hns-lb-missing'],
    );
    assert.match(f[0]?.evidence ?? '', /10\.96\.0\.10/);
    assert.doesNotMatch(f[0]?.evidence ?? '', /10\.96\.0\.1\b(?!0)/);
    assert.equal(f[0]?.reference, 'kubernetes/kubernetes#135802');
    // hnsdiag's listing counts too.
    const hnsdiag = 'Load Balancer    : 3599612c\n  Virtual IPs      : 10.96.0.10\n  Direct IP IDs    : 78c19c4d';
    assert.deepEqual(ids([apiNode, windowsNode({ 'hns-policylists': POLICIES, 'hns-loadbalancers': hnsdiag })]), []);
  });
  it('flanneld forbidden listing nodes, a stopped service, a wrong VNI in net-conf.json', () => {
    const log =
      'E1124 03:00:00 main.go:330] Error registering network: failed to acquire lease: nodes "compute-01" is forbidden: User "system:serviceaccount:kube-flannel:flannel" cannot get resource "nodes"';
    const nodes = [
      apiNode,
      windowsNode({
        'flanneld-log': log,
        services: 'containerd Running\nflanneld Stopped\nkubelet Running\nkube-proxy Running',
        'net-conf': '{"Backend":{"Type":"vxlan","VNI":1,"Port":8472}}',
      }),
    ];
    assert.deepEqual(ids(nodes).sort(), [
      'compute-01:flanneld-forbidden',
      'compute-01:service-down',
      'compute-01:vxlan-mismatch',
    ]);
  });
});

describe('diagnose: the kubelet without a pod network', () => {
  // Run 40 of the real-cluster tier: the control plane's kubelet log still held its start, before flannel ran.
  const kubeletLog =
    'Nov 30 04:39:45 controller-01 kubelet[1718]: E1130 04:39:45.448869    1718 kubelet.go:3130] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"';
  // As kubectl's tabwriter prints it: each column as wide as its widest cell and three spaces.
  const nodesTable = (status: string) => {
    const w = Math.max('STATUS'.length, status.length) + 3;
    return `NAME            ${'STATUS'.padEnd(w)}ROLES           AGE   VERSION\ncontroller-01   ${status.padEnd(w)}control-plane   23m   v1.35.4\n`;
  };
  const at = (nodes: string | undefined): string[] =>
    ids([
      {
        node: cp,
        sections: new Map([
          ['kubelet-log', kubeletLog],
          ...(nodes === undefined ? [] : [['cluster-nodes', nodes] as [string, string]]),
        ]),
      },
    ]);

  it('a Ready node is not named for a line from before its network came up', () => {
    assert.deepEqual(at(nodesTable('Ready')), []);
    assert.deepEqual(at(nodesTable('Ready,SchedulingDisabled')), []);
  });

  it('a NotReady node, or one the API could not list, is named with the line', () => {
    assert.deepEqual(at(nodesTable('NotReady')), ['controller-01:cni-not-ready']);
    assert.deepEqual(at(undefined), ['controller-01:cni-not-ready']);
  });
});

describe('diagnose on real Linux output', () => {
  it('the collection script, run in a private network namespace with a wrong VXLAN link, yields the vxlan-mismatch finding', (t) => {
    const node = model.nodes.find((n) => n.role === 'control-plane') ?? assert.fail();
    const script = collectScript('sh', linuxSections(model, node, false));
    let text: string;
    try {
      text = execFileSync(
        'unshare',
        ['-n', 'sh', '-c', `ip link add flannel.4096 type vxlan id 42 dstport 8472 local 127.0.0.1\n${script}`],
        { encoding: 'utf8', timeout: 30_000 },
      );
    } catch (error) {
      t.skip(`unshare -n is not available here: ${String(error)}`);
      return;
    }
    const sections = splitSections(text);
    assert.deepEqual(
      [...sections.keys()],
      linuxSections(model, node, false).map((s) => s.name),
    );
    assert.match(sections.get('vxlan-link') ?? '', /vxlan id 42 .*dstport 8472/s);
    const findings = matchSignatures(cluster, [{ node: cp, sections }]);
    const f = findings.find((x) => x.id === 'vxlan-mismatch') ?? assert.fail(JSON.stringify(findings));
    assert.match(f.evidence, /VNI 42, port 8472/);
  });
});

describe('diagnose scripts and CLI', () => {
  it('the Windows collection script parses and passes the PowerShell rules', () => {
    const { plan } = assembleDiagnosePlan(model, diagnosedNodes(model, undefined));
    const w = plan.tasks.find((t) => t.apply.shell === 'powershell') ?? assert.fail();
    assert.deepEqual(parseErrors(w.apply.script), []);
    assert.deepEqual(lintPowerShell(w.apply.script), []);
    assert.match(w.apply.script, /Invoke-KubemixHns -Method 'GET' -Path '\/policylists\/'/);
    assert.equal(windowsSections(model).length > 10, true);
  });
  it('an unknown --node and an existing --out are exit 2, before any host is touched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-diag-'));
    try {
      const path = repoPath('examples', 'k8s-libvirt-1-1-1.yaml');
      const a = await runCli(['diagnose', path, '--node', 'nope', '--state-dir', join(dir, 's')]);
      assert.equal(a.code, 2);
      assert.match(a.stderr, /--node: nope is not a cluster node/);
      const b = await runCli(['diagnose', path, '--out', dir, '--state-dir', join(dir, 's')]);
      assert.equal(b.code, 2);
      assert.match(b.stderr, /exists; the bundle goes into a new directory/);
      assert.equal(statSync(dir).isDirectory(), true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('diagnose: the services node', () => {
  const services = { name: 'service-01', osFamily: 'linux', role: 'services' } as const;
  const node = (over: Record<string, string>): NodeSections => ({
    node: services,
    sections: new Map(Object.entries({ 'service-states': 'haproxy active\nnamed active', ...over })),
  });
  it('collects every switched-on service: state, its own config test, log; never the registry key', () => {
    const names = servicesSections(model).map((s) => s.name);
    for (const n of ['service-states', 'haproxy-check', 'named-check', 'haproxy-log', 'named-log', 'listening'])
      assert.ok(names.includes(n), n);
    const text = servicesSections(model)
      .map((s) => s.command.text)
      .join('\n');
    assert.match(text, /haproxy -c -f \/etc\/haproxy\/haproxy\.cfg; echo "exit \$\?"/);
    assert.match(text, /named-checkconf -z \/etc\/bind\/named\.conf/);
    assert.doesNotMatch(text, /registry\.key|htpasswd/);
    assert.ok(diagnosedNodes(model, undefined).some((n) => n.role === 'services'));
  });
  it('a stopped service and a failing config test are named; a healthy node is quiet', () => {
    assert.deepEqual(ids([node({ 'haproxy-check': 'Configuration file is valid\nexit 0' })]), []);
    const bad = node({
      'service-states': 'haproxy failed\nnamed active',
      'named-check': "/etc/bind/named.conf:12: unknown option 'fowarders'\nexit 1",
    });
    assert.deepEqual(ids([bad]).sort(), ['service-01:services-config-invalid', 'service-01:services-down']);
    const f = matchSignatures(cluster, [bad]).find((x) => x.id === 'services-config-invalid');
    assert.match(f?.evidence ?? '', /unknown option 'fowarders'/);
  });
});
