// The VXLAN mesh between hypervisors, for real: two test hosts (network
// namespaces on one underlay bridge) run the rendered overlay scripts; the
// gateway's bridge stands in for the libvirt NAT network's (same name,
// gateway address), the other's is made by its script. A "guest" namespace
// on each bridge then reaches the gateway and the other guest across the
// mesh, with full 1450-byte frames and DF set, and a 1451-byte one does not
// pass. The link uses UDP 64789 (flannel keeps 4789) and the cluster's VNI.
// Then the overlay task installs its boot unit (into a folder of the test's
// own instead of /etc/systemd/system, which the machine's systemd reads),
// systemd-analyze verifies it, and after a simulated reboot (every link
// gone; the gateway's libvirt bridge back a few seconds later, as its
// network autostarts) the unit's own command makes the mesh again and the
// guests reach each other across it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  overlayCheckScript,
  overlayLinks,
  overlayUpScript,
  OVERLAY_PORT,
  overlayUnitName,
  UNIT_DIR,
} from '../src/drivers/libvirt/render/overlay.js';
import { DEFINITION, libvirtArtifacts } from '../src/drivers/libvirt/artifacts.js';
import { definitionsDir } from '../src/drivers/libvirt/layout.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { resolveModel, type ClusterModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { TestNet, harnessAvailable, quiet, sh } from './harness/netns.js';

const inNs = (ns: string, script: string) =>
  spawnSync('ip', ['netns', 'exec', ns, 'sh', '-c', script], { encoding: 'utf8', timeout: 30_000 });
const ping = (ns: string, ip: string, size: number) =>
  spawnSync('ip', ['netns', 'exec', ns, 'ping', '-c', '1', '-W', '2', '-M', 'do', '-s', String(size), ip], {
    encoding: 'utf8',
  });

/** Up to 5 tries: right after links come back, the first frames also wait for ARP across the mesh. */
function pingSoon(ns: string, ip: string, size: number): number | null {
  let status: number | null = null;
  for (let i = 0; i < 5 && status !== 0; i++) status = ping(ns, ip, size).status;
  return status;
}

describe('the VXLAN mesh joins two hypervisors’ bridges', { skip: harnessAvailable(), timeout: 180_000 }, () => {
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
      assert.equal(inNs(h.ns, overlayCheckScript(model, hv).text).status, 1, 'nothing there yet');
      for (const round of [1, 2]) {
        const up = inNs(h.ns, overlayUpScript(model, hv));
        assert.equal(up.status, 0, `${hv.name} round ${round}: ${up.stderr}`);
      }
      const check = inNs(h.ns, overlayCheckScript(model, hv).text);
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

  it('the overlay task installs a boot unit that systemd-analyze accepts and makes the mesh again after a reboot', async () => {
    const { plan } = assemblePlan(model);
    const units = net.hosts.map((h, i) => {
      const hv = model.hypervisors[i] ?? assert.fail();
      // The definitions and the unit folder of this host, in the test's own folders.
      const defs = join(net.root, `defs-${hv.name}`);
      const unitDir = join(net.root, `units-${hv.name}`);
      mkdirSync(defs, { recursive: true });
      for (const f of libvirtArtifacts(model).filter((a) => a.node === hv.name)) {
        const rel = f.remotePath.slice(definitionsDir(model).length + 1);
        if (rel !== DEFINITION.overlay && rel !== DEFINITION.overlayUnit) continue;
        // The unit runs the script where the definitions lie: here, the test's copy.
        writeFileSync(join(defs, rel), f.content.replaceAll(definitionsDir(model), defs));
      }
      const task = plan.tasks.find((t) => t.id === `task-create-network/${hv.name}/overlay`) ?? assert.fail();
      const local = (script: string) =>
        script.replace(/^dir=.*$/m, `dir='${defs}'`).replace(/^units=.*$/m, `units='${unitDir}'`);
      assert.equal(inNs(h.ns, local(task.check?.script ?? 'exit 9')).status, 1, 'no unit yet');
      const applied = inNs(h.ns, local(task.apply.script));
      assert.equal(applied.status, 0, applied.stderr);
      const check = inNs(h.ns, local(task.check?.script ?? 'exit 9'));
      assert.equal(check.status, 0, check.stdout);
      const unit = join(unitDir, overlayUnitName(model));
      assert.equal(readlinkSync(join(unitDir, 'multi-user.target.wants', overlayUnitName(model))), unit);
      assert.match(task.apply.script, new RegExp(`^units=${UNIT_DIR}$`, 'm'));
      return { ns: h.ns, unit, text: readFileSync(unit, 'utf8') };
    });
    // systemd's own unit loader reads the unit without a complaint.
    const verify = spawnSync('systemd-analyze', ['verify', '--man=no', ...units.map((u) => u.unit)], {
      encoding: 'utf8',
    });
    assert.equal(verify.status, 0, verify.stderr);
    assert.doesNotMatch(verify.stderr, /kubemix-kmxvx/);

    // A reboot: no link of the mesh is left; libvirt brings the gateway's bridge back a little later.
    const { bridge, vxlan } = overlayLinks(model);
    const [a, b] = net.hosts;
    assert.ok(a !== undefined && b !== undefined);
    // libvirt gives its bridge the MAC address stored in the network's definition: the same after the reboot.
    const mac = sh('ip', ['-n', a.ns, '-br', 'link', 'show', bridge]).split(/\s+/)[2] ?? assert.fail('no MAC');
    for (const h of [a, b]) for (const l of [vxlan, bridge]) quiet('ip', ['-n', h.ns, 'link', 'del', l]);
    const gateway = model.cluster.network.gateway;
    const libvirtStarts = spawn('ip', [
      'netns',
      'exec',
      a.ns,
      'sh',
      '-c',
      `sleep 3; ip link add ${bridge} address ${mac} type bridge && ip link set ${bridge} mtu 1450 up && ip addr add ${gateway}/24 dev ${bridge}`,
    ]);
    const libvirtStarted = new Promise((r) => libvirtStarts.on('close', r));
    const boot = await Promise.all(
      units.map(
        (u) =>
          new Promise<{ status: number | null; stderr: string }>((resolve) => {
            const exec = /^ExecStart=\/bin\/sh "(.*)"$/m.exec(u.text)?.[1] ?? assert.fail('no ExecStart');
            const child = spawn('ip', ['netns', 'exec', u.ns, '/bin/sh', exec], {
              stdio: ['ignore', 'ignore', 'pipe'],
              timeout: 60_000,
            });
            let stderr = '';
            child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
            child.on('close', (status) => resolve({ status, stderr }));
          }),
      ),
    );
    await libvirtStarted;
    for (const r of boot) assert.equal(r.status, 0, r.stderr);
    // libvirt attaches a guest's tap to the bridge when it starts the guest.
    sh('ip', ['-n', a.ns, 'link', 'set', 'kmxtap1', 'master', bridge, 'up']);
    sh('ip', ['-n', b.ns, 'link', 'set', 'kmxtap2', 'master', bridge, 'up']);
    const [ga, gb] = guests;
    assert.ok(ga !== undefined && gb !== undefined);
    assert.equal(pingSoon(gb, gateway, 1422), 0, 'the gateway across the mesh again');
    assert.equal(pingSoon(ga, '10.77.0.12', 1422), 0, 'guest to guest across the mesh again');
    assert.notEqual(ping(gb, gateway, 1423).status, 0, 'the MTU holds again');
  });
});
