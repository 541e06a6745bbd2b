// Layer 1 of `kubemix verify` for real: probes over SSH on network-namespace
// test hosts, with real faults (nftables dropping UDP 4789, a lowered link
// MTU, a name that does not resolve, a host behind a router for host-gw).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable, quiet, sh, type TestHost } from './harness/netns.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { SshTransport, DEFAULT_SSH_OPTIONS } from '../src/transport/ssh.js';
import { planUnderlay, type UnderlayInput } from '../src/verify/underlay/plan.js';
import { runUnderlay } from '../src/verify/underlay/run.js';
import type { CheckResult } from '../src/verify/types.js';

const skip = harnessAvailable();

describe('verify underlay on sshd test hosts', { skip, timeout: 180_000 }, () => {
  let net: TestNet;
  const transports = new Map<string, SshTransport>();

  const input = (over: Partial<UnderlayInput> = {}): UnderlayInput => ({
    nodes: net.hosts.map((h, i) => ({
      name: h.name,
      address: h.address,
      os: 'linux',
      role: i === 0 ? 'control-plane' : i === 1 ? 'worker' : 'services',
    })),
    nodeMtu: 1500,
    vxlanPort: 4789,
    hostGw: false,
    api: { address: net.hosts[2]!.address, port: 6443, viaLoadBalancer: true },
    names: [{ name: 'api.verify.test', addresses: [net.hosts[2]!.address] }],
    installed: false,
    maxClockSkewMs: 2000,
    ...over,
  });

  async function run(i: UnderlayInput, select?: (id: string) => boolean): Promise<CheckResult[]> {
    return runUnderlay(planUnderlay(i, select), { transports, signal: new AbortController().signal });
  }
  const failed = (rs: readonly CheckResult[]): string[] =>
    rs
      .filter((r) => r.status === 'fail')
      .map((r) => r.id)
      .sort();
  const ns = (h: TestHost): string[] => ['-n', h.ns];

  before(async () => {
    net = await TestNet.create(3, { privateHosts: true });
    writeFileSync(net.hostsFile, `127.0.0.1 localhost\n${net.hosts[2]!.address} api.verify.test\n`);
    const kh = join(net.root, 'known_hosts');
    writeFileSync(kh, `${net.hosts.map((h) => net.knownHostsLine(h)).join('\n')}\n`);
    const knownHosts = await new KnownHostsFile(kh).load();
    for (const h of net.hosts)
      transports.set(
        h.name,
        new SshTransport(net.connection(h), {
          ...DEFAULT_SSH_OPTIONS,
          knownHosts,
          trustNewHosts: false,
          maxSessions: 6,
        }),
      );
  });
  after(async () => {
    await Promise.all([...transports.values()].map((t) => t.close()));
    await net?.cleanup();
  });

  it('passes every cell of a healthy underlay (host-gw included) and skips the ports before install', async () => {
    const rs = await run(input({ hostGw: true }));
    assert.deepEqual(
      failed(rs),
      [],
      JSON.stringify(
        rs.filter((r) => r.status === 'fail'),
        null,
        1,
      ),
    );
    const probes = new Set(rs.filter((r) => r.status === 'pass').map((r) => r.probe));
    assert.deepEqual([...probes].sort(), ['clock', 'dns', 'l2-segment', 'mtu-1500', 'ping', 'udp-4789']);
    const skipped = rs.filter((r) => r.status === 'skip');
    assert.ok(skipped.length > 0 && skipped.every((r) => /^tcp-(6443|10250)$/.test(r.probe)));
    assert.ok(skipped.every((r) => r.detail === 'before install: nothing listens yet'));
    // 3 nodes: 6 ordered pairs for ping, mtu, l2 and udp; 3 dns, 3 clock.
    assert.equal(rs.filter((r) => r.status === 'pass').length, 6 * 4 + 3 + 3);
  });

  it('names exactly the UDP 4789 cells into a host whose nftables drop it', async () => {
    const h = net.hosts[1]!;
    sh('ip', ['netns', 'exec', h.ns, 'nft', 'add table inet kmverify']);
    try {
      sh('ip', ['netns', 'exec', h.ns, 'nft', 'add chain inet kmverify in { type filter hook input priority 0 ; }']);
      sh('ip', ['netns', 'exec', h.ns, 'nft', 'add rule inet kmverify in udp dport 4789 drop']);
      const rs = await run(input());
      assert.deepEqual(failed(rs), ['underlay/udp-4789/host-1/host-2', 'underlay/udp-4789/host-3/host-2']);
      const cell = rs.find((r) => r.id === 'underlay/udp-4789/host-1/host-2')!;
      assert.match(cell.detail, /no datagram arrived at host-2/);
      assert.match(cell.cause ?? '', /firewall drops UDP 4789/);
      assert.match(cell.command ?? '', /send 'kubemix-verify:host-1' to 198\.51\.100\.\d+:4789\/udp/);
    } finally {
      quiet('ip', ['netns', 'exec', h.ns, 'nft', 'delete table inet kmverify']);
    }
  });

  it('after install: VXLAN through the CNI device node to node; dropped UDP 4789 and a missing neighbour named', async () => {
    // flannel's vxlan backend as it programs each node: flannel.<VNI> with the node's VTEP address (the .0 of its
    // pod subnet), and per peer a forwarding entry (peer VTEP MAC → peer node IP), a neighbour (peer VTEP IP →
    // MAC) and a route to the peer's pod subnet via its VTEP, onlink.
    const [a, b] = [net.hosts[0]!, net.hosts[1]!];
    const vtep = (i: number) => ({ ip: `10.245.${i}.0`, mac: `0a:58:0a:f5:0${i}:00` });
    const links = [
      [a, 1, b, 2],
      [b, 2, a, 1],
    ] as const;
    for (const [h, i] of links) {
      sh('ip', [
        ...ns(h),
        'link',
        'add',
        'flannel.4096',
        'address',
        vtep(i).mac,
        'type',
        'vxlan',
        'id',
        '4096',
        'dstport',
        '4789',
        'local',
        h.address,
        'dev',
        'eth0',
        'nolearning',
      ]);
      sh('ip', [...ns(h), 'addr', 'add', `${vtep(i).ip}/32`, 'dev', 'flannel.4096']);
      sh('ip', [...ns(h), 'link', 'set', 'flannel.4096', 'up']);
    }
    const program = (h: TestHost, peer: TestHost, j: number) => {
      sh('bridge', [...ns(h), 'fdb', 'append', vtep(j).mac, 'dev', 'flannel.4096', 'dst', peer.address]);
      sh('ip', [
        ...ns(h),
        'neigh',
        'replace',
        vtep(j).ip,
        'lladdr',
        vtep(j).mac,
        'dev',
        'flannel.4096',
        'nud',
        'permanent',
      ]);
      sh('ip', [...ns(h), 'route', 'replace', `10.245.${j}.0/24`, 'via', vtep(j).ip, 'dev', 'flannel.4096', 'onlink']);
    };
    const only = (id: string): boolean => /\/vxlan\//.test(id);
    const installed = input({ installed: true, vxlanDevice: 'flannel.4096' });
    try {
      for (const [h, , peer, j] of links) program(h, peer, j);
      const healthy = await run(installed, only);
      // host-3 is the services node: no overlay there.
      assert.deepEqual(
        healthy.map((r) => `${r.id} ${r.status}`),
        ['underlay/vxlan/host-1/host-2 pass', 'underlay/vxlan/host-2/host-1 pass'],
        JSON.stringify(healthy, null, 1),
      );
      assert.match(healthy[0]?.detail ?? '', /the VTEP 10\.245\.2\.0 answers across flannel\.4096/);
      sh('ip', ['netns', 'exec', b.ns, 'nft', 'add table inet kmverify']);
      sh('ip', ['netns', 'exec', b.ns, 'nft', 'add chain inet kmverify in { type filter hook input priority 0 ; }']);
      sh('ip', ['netns', 'exec', b.ns, 'nft', 'add rule inet kmverify in udp dport 4789 drop']);
      const dropped = await run(installed, only);
      // Both ways: host-1's echoes into host-2 are dropped, and so are host-1's replies to host-2's.
      assert.deepEqual(failed(dropped), ['underlay/vxlan/host-1/host-2', 'underlay/vxlan/host-2/host-1']);
      for (const r of dropped) assert.match(r.cause ?? '', /a firewall drops UDP 4789 \(the VXLAN port\)/);
      quiet('ip', ['netns', 'exec', b.ns, 'nft', 'delete table inet kmverify']);
      sh('bridge', [...ns(a), 'fdb', 'del', vtep(2).mac, 'dev', 'flannel.4096', 'dst', b.address]);
      // host-1 has forgotten host-2: it cannot send to it, nor answer it.
      const unknown = await run(installed, only);
      assert.deepEqual(failed(unknown), ['underlay/vxlan/host-1/host-2', 'underlay/vxlan/host-2/host-1']);
      assert.match(unknown[0]?.detail ?? '', /flannel\.4096 has no VXLAN neighbour for this node/);
      assert.match(unknown[0]?.cause ?? '', /the CNI on the source has not learned the target/);
      assert.match(unknown[1]?.detail ?? '', /get no reply/);
    } finally {
      quiet('ip', ['netns', 'exec', b.ns, 'nft', 'delete table inet kmverify']);
      for (const h of [a, b]) quiet('ip', [...ns(h), 'link', 'del', 'flannel.4096']);
    }
  });

  it('finds a link whose MTU is below the planned node MTU, both ways', async () => {
    const h = net.hosts[2]!;
    sh('ip', [...ns(h), 'link', 'set', 'eth0', 'mtu', '1400']);
    try {
      const only = (id: string): boolean => /\/(ping|mtu-1500)\//.test(id);
      const rs = await run(input(), only);
      assert.deepEqual(failed(rs), [
        'underlay/mtu-1500/host-1/host-3',
        'underlay/mtu-1500/host-2/host-3',
        'underlay/mtu-1500/host-3/host-1',
        'underlay/mtu-1500/host-3/host-2',
      ]);
      const local = rs.find((r) => r.id === 'underlay/mtu-1500/host-3/host-1')!;
      assert.match(local.detail, /own link MTU is 1400/);
      const remote = rs.find((r) => r.id === 'underlay/mtu-1500/host-1/host-3')!;
      assert.match(remote.cause ?? '', /MTU below 1500/);
      assert.match(remote.command ?? '', /ping -n -c 3 -i 0\.2 -W 2 -M 'do' -s 1472 198\.51\.100\./);
    } finally {
      sh('ip', [...ns(h), 'link', 'set', 'eth0', 'mtu', '1500']);
    }
  });

  it('finds a name that does not resolve and one that resolves elsewhere', async () => {
    const names = [
      { name: 'api.verify.test', addresses: [net.hosts[0]!.address] },
      { name: 'registry.verify.test', addresses: [net.hosts[2]!.address] },
    ];
    const rs = await run(input({ names }), (id) => id.includes('/dns/'));
    assert.equal(rs.length, 6);
    assert.ok(rs.every((r) => r.status === 'fail'));
    const api = rs.find((r) => r.id === 'underlay/dns/host-1/api.verify.test')!;
    assert.match(api.detail, /resolves to 198\.51\.100\.\d+, planned 198\.51\.100\.\d+/);
    const reg = rs.find((r) => r.id === 'underlay/dns/host-2/registry.verify.test')!;
    assert.equal(reg.detail, 'the name does not resolve');
    assert.equal(reg.command, 'getent ahostsv4 registry.verify.test');
  });

  it('host-gw: finds a node that reaches its peers through a router', async () => {
    const h = net.hosts[2]!;
    const prefix = `198.51.100.${net.block * 16}/28`;
    sh('ip', [...ns(h), 'addr', 'del', `${h.address}/28`, 'dev', 'eth0']);
    try {
      sh('ip', [...ns(h), 'addr', 'add', `${h.address}/32`, 'dev', 'eth0']);
      sh('ip', [...ns(h), 'route', 'add', net.gateway, 'dev', 'eth0']);
      sh('ip', [...ns(h), 'route', 'add', prefix, 'via', net.gateway]);
      const rs = await run(input({ hostGw: true }), (id) => id.includes('/l2-segment/'));
      assert.deepEqual(failed(rs), ['underlay/l2-segment/host-3/host-1', 'underlay/l2-segment/host-3/host-2']);
      const cell = rs.find((r) => r.id === 'underlay/l2-segment/host-3/host-1')!;
      assert.equal(cell.detail, `routed via ${net.gateway}`);
      assert.match(cell.cause ?? '', /one L2 segment/);
    } finally {
      quiet('ip', [...ns(h), 'addr', 'del', `${h.address}/32`, 'dev', 'eth0']);
      sh('ip', [...ns(h), 'addr', 'add', `${h.address}/28`, 'dev', 'eth0']);
    }
  });
});
