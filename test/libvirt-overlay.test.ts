// The VXLAN mesh between hypervisors, for real: two test hosts (network
// namespaces on one underlay bridge) run the rendered overlay scripts; the
// gateway's bridge stands in for the libvirt NAT network's (same name,
// gateway address), the other's is made by its script. A "guest" namespace
// on each bridge then reaches the gateway and the other guest across the
// mesh, with full 1450-byte frames and DF set, and a 1451-byte one does not
// pass. The link uses UDP 64789 (flannel keeps 4789) and the cluster's VNI.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { stringify } from 'yaml';
import {
  overlayCheckScript,
  overlayLinks,
  overlayUpScript,
  OVERLAY_PORT,
} from '../src/drivers/libvirt/render/overlay.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { TestNet, harnessAvailable, quiet, sh } from './harness/netns.js';

const inNs = (ns: string, script: string) =>
  spawnSync('ip', ['netns', 'exec', ns, 'sh', '-c', script], { encoding: 'utf8', timeout: 30_000 });
const ping = (ns: string, ip: string, size: number) =>
  spawnSync('ip', ['netns', 'exec', ns, 'ping', '-c', '1', '-W', '2', '-M', 'do', '-s', String(size), ip], {
    encoding: 'utf8',
  });

describe('the VXLAN mesh joins two hypervisors’ bridges', { skip: harnessAvailable() }, () => {
  let net: TestNet;
  let model: ClusterModel;
  const guests: string[] = [];

  before(async () => {
    net = await TestNet.create(2);
    const [a, b] = net.hosts;
    assert.ok(a !== undefined && b !== undefined);
    const text = stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: `mesh${net.block}` },
      spec: {
        network: { nodeCidr: '10.77.0.0/24' },
        infrastructure: {
          driver: 'libvirt',
          hypervisors: [
            { name: 'hv-a', address: a.address },
            { name: 'hv-b', address: b.address },
          ],
        },
      },
    });
    model = resolveModel(readSpec({ kind: 'file', path: 'mesh.yaml', text }));
    const { bridge } = overlayLinks(model);
    // libvirt's NAT network on the gateway: its bridge, MTU and gateway address.
    sh('ip', ['-n', a.ns, 'link', 'add', bridge, 'type', 'bridge']);
    sh('ip', ['-n', a.ns, 'link', 'set', bridge, 'mtu', '1450', 'up']);
    sh('ip', ['-n', a.ns, 'addr', 'add', `${model.cluster.network.gateway}/24`, 'dev', bridge]);
  });
  after(async () => {
    for (const g of guests) quiet('ip', ['netns', 'del', g]);
    await net?.cleanup();
  });

  /** A guest namespace whose eth0 is a port of `hostNs`'s cluster bridge. */
  function guest(hostNs: string, i: number, ip: string): string {
    const ns = `km${net.block}hg${i}`;
    guests.push(ns);
    sh('ip', ['netns', 'add', ns]);
    const tap = `kmxtap${i}`;
    sh('ip', ['-n', hostNs, 'link', 'add', tap, 'mtu', '1450', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    sh('ip', ['-n', hostNs, 'link', 'set', tap, 'master', overlayLinks(model).bridge, 'up']);
    sh('ip', ['-n', ns, 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    sh('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
    return ns;
  }

  it('brings the mesh up on both, idempotently, with UDP 64789 and the cluster VNI', () => {
    assert.equal(model.cluster.network.nodeMtu, 1450);
    for (const [h, hv] of net.hosts.map((h, i) => [h, model.hypervisors[i]] as const)) {
      assert.ok(hv !== undefined);
      assert.equal(inNs(h.ns, overlayCheckScript(model, hv)).status, 1, 'nothing there yet');
      for (const round of [1, 2]) {
        const up = inNs(h.ns, overlayUpScript(model, hv));
        assert.equal(up.status, 0, `${hv.name} round ${round}: ${up.stderr}`);
      }
      const check = inNs(h.ns, overlayCheckScript(model, hv));
      assert.equal(check.status, 0, check.stdout);
      const { vxlan, vni, bridge } = overlayLinks(model);
      const link = sh('ip', ['-n', h.ns, '-d', 'link', 'show', vxlan]);
      assert.match(link, new RegExp(`vxlan id ${vni} `));
      assert.match(link, new RegExp(`dstport ${OVERLAY_PORT} `));
      assert.match(link, new RegExp(`mtu 1450 .*master ${bridge} `));
      // One all-zero entry per peer (the other hypervisor), none for itself, no duplicate from round 2.
      const fdb = sh('ip', ['netns', 'exec', h.ns, 'bridge', 'fdb', 'show', 'dev', vxlan]);
      assert.equal(fdb.match(/^00:00:00:00:00:00 dst /gm)?.length, 1, fdb);
      assert.doesNotMatch(fdb, new RegExp(`dst ${h.address} `));
    }
  });

  it('guests on both hypervisors reach the gateway and each other; 1450 passes, 1451 does not', () => {
    const [a, b] = net.hosts;
    assert.ok(a !== undefined && b !== undefined);
    const ga = guest(a.ns, 1, '10.77.0.11');
    const gb = guest(b.ns, 2, '10.77.0.12');
    const gateway = model.cluster.network.gateway;
    // ICMP echo: 20 bytes IP + 8 bytes ICMP around the payload.
    const first = ping(gb, gateway, 1422);
    assert.equal(first.status, 0, `${first.stdout}${first.stderr}`);
    assert.equal(ping(gb, '10.77.0.11', 1422).status, 0);
    assert.equal(ping(ga, '10.77.0.12', 1422).status, 0);
    assert.notEqual(ping(gb, gateway, 1423).status, 0, 'a frame above 1450 must not pass');
    // The traffic crossed the underlay as VXLAN: the peer's FDB learned the guest's MAC behind the other end.
    const mac = sh('ip', ['-n', gb, '-br', 'link', 'show', 'eth0']).split(/\s+/)[2] ?? '';
    const learned = sh('ip', ['netns', 'exec', a.ns, 'bridge', 'fdb', 'show', 'dev', overlayLinks(model).vxlan]);
    assert.match(learned, new RegExp(`^${mac} dst ${b.address} `, 'm'));
  });
});
