// The libvirt driver's create tasks against a real system-mode libvirtd
// (test/harness/libvirt-system.ts: root, in the hypervisor test host's
// network namespace and a private mount namespace). The planned tasks of a
// 1-1-1 cluster (controller, Linux compute, services node) run over SSH
// through the executor up to task-create-network: hypervisor prepared (pool,
// domain type qemu, the cloud image from a local file:/// path with its
// SHA256), cleanup, capacity, CIDR check, the NAT network with
// its bridge and dnsmasq, and per guest its qcow2 overlay, NoCloud seed ISO
// (xorriso) and domain, started under TCG. The cloud image is a blank 64 MiB
// qcow2: no operating system boots here, so the guests' SSH waits are left
// out of the run (they are tested by plan and trace). Then `kubemix down`
// (the CLI) removes everything of the cluster: domains, volumes, network and
// its bridge, pool, definitions, an overlay link.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPlan } from '../src/exec/apply-plan.js';
import { baseImagePath, definitionsDir, IMAGE_CACHE } from '../src/drivers/libvirt/layout.js';
import { clusterIdentity, networkName, poolName, poolPath } from '../src/drivers/libvirt/names.js';
import { overlayLinks } from '../src/drivers/libvirt/render/overlay.js';
import type { ClusterModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import type { Plan } from '../src/plan/types.js';
import { inMemoryTarget } from '../src/cli/run-plan.js';
import { FAST, newStateDir, writeKnownHosts } from './harness/fixture.js';
import { trackHostPaths } from './harness/host-paths.js';
import { LIBVIRT_IMAGES, SystemLibvirtd, systemLibvirtAvailable } from './harness/libvirt-system.js';
import { TestNet, harnessAvailable, sh } from './harness/netns.js';
import { runCli } from './helpers/cli.js';
import { SMALL, writeLibvirtSpec } from './helpers/libvirt-spec.js';

const skip =
  harnessAvailable() ??
  systemLibvirtAvailable() ??
  (existsSync('/usr/bin/xorriso') && existsSync('/usr/bin/isoinfo') ? undefined : 'no xorriso / isoinfo');
const META = { name: 'mk', domain: 'create.test' };
const CLUSTER = clusterIdentity(META);

/** The plan without the guests' SSH waits (nothing boots from a blank disk), and nothing waiting for them. */
function withoutSshWaits(plan: Plan): Plan {
  const waits = new Set(plan.tasks.filter((t) => /^task-create-network\/[^/]+\/ssh-/.test(t.id)).map((t) => t.id));
  const tasks = plan.tasks
    .filter((t) => !waits.has(t.id))
    .map((t) => ({ ...t, after: t.after.filter((a) => !waits.has(a)) }));
  return { ...plan, tasks };
}

describe('libvirt create tasks and kubemix down on a real system libvirtd', { skip, timeout: 600_000 }, () => {
  let net: TestNet;
  let lv: SystemLibvirtd;
  let model: ClusterModel;
  let specFile: string;
  let state: string;
  let knownHosts: string;
  const images: string[] = [];
  const hostPaths = trackHostPaths([definitionsDir({ cluster: META }), poolPath(CLUSTER)], [IMAGE_CACHE]);

  before(async () => {
    net = await TestNet.create(1);
    const host = net.hosts[0] ?? assert.fail();
    lv = await SystemLibvirtd.start(host.ns);
    specFile = join(net.root, 'mk.yaml');
    // The cloud image: a blank 64 MiB qcow2 (no OS boots here), given as a local file with its SHA256.
    const blank = join(net.root, 'blank.qcow2');
    sh('qemu-img', ['create', '-q', '-f', 'qcow2', blank, '64M']);
    const sha256 = createHash('sha256').update(readFileSync(blank)).digest('hex');
    ({ model } = writeLibvirtSpec(specFile, {
      meta: META,
      network: { nodeCidr: '10.123.0.0/24' },
      hypervisor: {
        name: 'hypervisor-01',
        address: host.address,
        identityFile: net.clientKey,
        libvirtUri: lv.uri,
        domainType: 'qemu',
      },
      nodes: {
        controlPlane: { count: 1, ...SMALL },
        workers: [{ name: 'compute', count: 1, os: 'debian-13', ...SMALL }],
      },
      services: SMALL,
      downloads: { 'images/debian-13': { url: `file://${blank}`, sha256 } },
    }));
    assert.deepEqual([...new Set(model.nodes.map((n) => n.os))], ['debian-13']);
    // The image task caches it; the test removes it unless it was there before.
    const cached = baseImagePath('debian-13');
    if (!existsSync(cached)) images.push(cached, `${cached}.source`);
    knownHosts = writeKnownHosts(net);
    state = newStateDir(net);
  });
  after(() => {
    lv?.stop();
    for (const f of images) spawnSync('rm', ['-f', f]);
    void net?.cleanup();
    hostPaths.cleanup();
    spawnSync('rmdir', [join(LIBVIRT_IMAGES, 'kubemix'), LIBVIRT_IMAGES]);
  });

  const apply = async () => {
    const target = inMemoryTarget(assemblePlan(model), state);
    return applyPlan(withoutSshWaits(target.plan), target.artifacts, {
      stateDir: state,
      knownHostsFile: knownHosts,
      signal: new AbortController().signal,
      stopAfter: 'task-create-network',
      ...FAST,
    });
  };

  it('creates the pool, NAT network, volumes, seed media and running domains of the plan', async () => {
    const result = await apply();
    assert.ok(result.failed.length === 0, JSON.stringify(result.failed));
    const host = net.hosts[0] ?? assert.fail();
    const fqdns = model.nodes.map((n) => `${n.name}.${CLUSTER}`).sort();
    assert.ok(lv.names('pool-list', '--name').includes(poolName(CLUSTER)));
    assert.match(lv.virsh('pool-info', '--pool', poolName(CLUSTER)), /^State:\s+running$/m);
    assert.deepEqual(lv.names('net-list', '--name'), [networkName(CLUSTER)], 'the network is active');
    const bridge = sh('ip', ['-n', host.ns, '-br', 'addr', 'show', overlayLinks(model).bridge]);
    assert.match(bridge, /\b10\.123\.0\.254\/24\b/, 'the bridge holds the gateway in the hypervisor namespace');
    const netXml = lv.virsh('net-dumpxml', '--network', networkName(CLUSTER));
    for (const n of model.nodes) assert.ok(netXml.includes(`<host mac='${n.mac}' name='${n.name}' ip='${n.ip}'/>`));
    const vols = lv
      .virsh('vol-list', '--pool', poolName(CLUSTER))
      .split('\n')
      .map((l) => l.trim().split(/\s+/)[0] ?? '')
      .filter(Boolean)
      .sort();
    assert.deepEqual(vols, fqdns.flatMap((f) => [`${f}-cidata.iso`, `${f}.qcow2`]).sort());
    assert.deepEqual(lv.names('list', '--name'), fqdns, 'every guest runs');
    for (const n of model.nodes) {
      const xml = lv.virsh('dumpxml', '--domain', `${n.name}.${CLUSTER}`);
      assert.match(xml, new RegExp(`<mac address='${n.mac}'/>`));
      assert.match(xml, /<domain type='qemu'/);
    }
    // The disk overlays the cached image; the seed is an ISO 9660 volume "cidata" holding the three files.
    const controller = `${model.nodes.find((n) => n.role === 'control-plane')?.name}.${CLUSTER}`;
    const disk = lv.virsh('vol-dumpxml', '--pool', poolName(CLUSTER), '--vol', `${controller}.qcow2`);
    assert.ok(disk.includes(`<path>${baseImagePath('debian-13')}</path>`), disk);
    const iso = join(net.root, 'seed.iso');
    lv.virsh('vol-download', '--pool', poolName(CLUSTER), '--vol', `${controller}-cidata.iso`, '--file', iso);
    assert.match(sh('isoinfo', ['-d', '-i', iso]), /^Volume id: cidata$/m);
    const listing = sh('isoinfo', ['-R', '-f', '-i', iso]).split('\n').filter(Boolean).sort();
    assert.deepEqual(listing, ['/meta-data', '/network-config', '/user-data']);
    const meta = sh('isoinfo', ['-R', '-i', iso, '-x', '/meta-data']);
    assert.ok(meta.includes(`instance-id: '${controller}'`), meta);
    // The host key reached the seed filled in (0600 files on the hypervisor, a real key in the ISO).
    const userData = sh('isoinfo', ['-R', '-i', iso, '-x', '/user-data']);
    assert.doesNotMatch(userData, /\{\{secret:/);
    // The guest authorises the deployer's key: the public half of the hypervisor's identityFile.
    const deployer = readFileSync(`${net.clientKey}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    assert.ok(userData.includes(deployer), 'the seed authorises the key kubemix reaches the hypervisor with');
  });

  it('a second run recreates nothing: the same domains (by UUID) keep running', async () => {
    const uuids = lv.names('list', '--uuid');
    const result = await apply();
    assert.equal(result.failed.length, 0);
    assert.deepEqual(lv.names('list', '--uuid'), uuids);
  });

  it('kubemix down removes domains, volumes, network and bridge, pool, definitions and overlay links', async () => {
    const host = net.hosts[0] ?? assert.fail();
    // A VXLAN link of the cluster's mesh (as a multi-hypervisor layout leaves it) goes too.
    const { vxlan, bridge } = overlayLinks(model);
    sh('ip', ['-n', host.ns, 'link', 'add', vxlan, 'type', 'vxlan', 'id', '7', 'dstport', '64789']);
    const down = (...extra: string[]) =>
      runCli(['down', specFile, '--yes', '--state-dir', state, '--known-hosts', knownHosts, ...extra], {
        env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
      });
    const r = await down();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lv.names('list', '--all', '--name'), []);
    assert.deepEqual(lv.names('net-list', '--all', '--name'), []);
    assert.deepEqual(lv.names('pool-list', '--all', '--name'), []);
    for (const link of [bridge, vxlan])
      assert.notEqual(spawnSync('ip', ['-n', host.ns, 'link', 'show', link]).status, 0, `${link} is gone`);
    assert.equal(existsSync(definitionsDir({ cluster: META })), false);
    assert.equal(existsSync(poolPath(CLUSTER)), false);
    assert.equal((await down('--check')).code, 0, 'nothing left to remove');
  });
});
