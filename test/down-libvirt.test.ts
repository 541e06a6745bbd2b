// `kubemix down` of a libvirt cluster against a real libvirt: a private
// libvirtd (session mode, its own sockets and folders) holds this cluster's
// VMs, volumes, media and network as the create tasks leave them, plus
// another cluster's and unmarked look-alikes; `kubemix down` runs its plan
// over SSH on a network-namespace test host whose virsh reaches the daemon
// through the socket in the spec's libvirtUri. The network is defined, not
// started: a session-mode daemon as nobody cannot create bridges or NAT.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { definitionsDir, IMAGE_CACHE } from '../src/drivers/libvirt/layout.js';
import { clusterIdentity, networkName, ownerMetadata, poolName, poolPath } from '../src/drivers/libvirt/names.js';
import { pinHostKeys } from '../src/exec/pin-host-keys.js';
import { SecretStore } from '../src/exec/secrets.js';
import { statePaths } from '../src/exec/state-dir.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { sshHostKeySecret } from '../src/model/secret-names.js';
import { newStateDir, writeKnownHosts } from './harness/fixture.js';
import { trackHostPaths } from './harness/host-paths.js';
import { LibvirtDaemon, libvirtAvailable } from './harness/libvirt.js';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { runCli } from './helpers/cli.js';
import { writeLibvirtSpec } from './helpers/libvirt-spec.js';

const skip = harnessAvailable() ?? libvirtAvailable();
// Short on purpose: `virsh pool-list --name` pads names shorter than its column (20 characters).
const META = { name: 'dl', domain: 'k.test' };
const CLUSTER = clusterIdentity(META);
const OTHER = clusterIdentity({ name: 'other', domain: 'kubeinit.local' });
const POOL = poolName(CLUSTER);
const IMAGES = 'images-shared-by-every-cluster-here';
const fqdn = (node: string, cluster = CLUSTER): string => `${node}.${cluster}`;

function domainXml(name: string, mark: string | undefined, pool: string, volume: string): string {
  const meta = mark === undefined ? '' : `<metadata>${ownerMetadata(mark)}</metadata>`;
  const disk = `<disk type='volume' device='disk'><driver name='qemu' type='qcow2'/><source pool='${pool}' volume='${volume}'/><target dev='vda' bus='virtio'/></disk>`;
  return `<domain type='qemu'><name>${name}</name>${meta}<memory unit='MiB'>64</memory><vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os><devices>${disk}</devices></domain>`;
}

describe('kubemix down on a real libvirt', { skip, timeout: 180_000 }, () => {
  let net: TestNet;
  let lv: LibvirtDaemon;
  let specFile: string;
  let state: string;
  let knownHosts: string;
  let hypervisorLine: string;

  function define(xml: string, kind: 'define' | 'net-define' = 'define'): void {
    const file = join(net.root, 'define.xml');
    writeFileSync(file, xml);
    lv.virsh(kind, '--file', file);
  }

  /** A guest as the create tasks leave it: disk and first-boot media in the cluster pool, a marked domain. */
  function guest(node: string, media: string, start: boolean): void {
    const name = fqdn(node);
    lv.virsh('vol-create-as', POOL, `${name}.qcow2`, '1M', '--format', 'qcow2');
    lv.virsh('vol-create-as', POOL, `${name}${media}`, '1M', '--format', 'raw');
    define(domainXml(name, CLUSTER, POOL, `${name}.qcow2`));
    if (start) lv.virsh('start', '--domain', name);
  }

  const down = (...extra: string[]) =>
    runCli(['down', specFile, '--yes', '--state-dir', state, '--known-hosts', knownHosts, ...extra], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
  const names = (...args: string[]): string[] => lv.names(...args).map((n) => n.trim());
  function volumes(pool: string): string[] {
    lv.virsh('pool-refresh', '--pool', pool);
    return lv
      .virsh('vol-list', '--pool', pool)
      .split('\n')
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/)[0] ?? '')
      .sort();
  }

  before(async () => {
    [net, lv] = await Promise.all([TestNet.create(1), LibvirtDaemon.start()]);
    const host = net.hosts[0] ?? assert.fail();
    specFile = join(net.root, 'downlab.yaml');
    const { model } = writeLibvirtSpec(specFile, {
      meta: META,
      hypervisor: { name: 'hypervisor-01', address: host.address, identityFile: net.clientKey, libvirtUri: lv.uri },
      nodes: { controlPlane: { count: 1 }, workers: [{ name: 'compute', count: 2, os: 'debian-13' }] },
      services: { enabled: false },
    });
    knownHosts = writeKnownHosts(net);
    hypervisorLine = readFileSync(knownHosts, 'utf8');
    state = newStateDir(net);
    // The executor generated and pinned the guests' host keys when it created them.
    const secrets = await SecretStore.open(statePaths(state).secrets);
    await secrets.ensureGenerated(
      model.nodes.map((n) => sshHostKeySecret(n.name)),
      new Set(),
    );
    await pinHostKeys(model.hosts, secrets, await new KnownHostsFile(knownHosts).load());
    for (const [pool, dir] of [
      [POOL, 'pool'],
      [IMAGES, IMAGES],
      [poolName(OTHER), 'other'],
    ] as const) {
      lv.virsh('pool-define-as', '--name', pool, '--type', 'dir', '--target', lv.dir(dir));
      lv.virsh('pool-start', '--pool', pool);
    }
    lv.virsh('vol-create-as', IMAGES, 'debian-13.qcow2', '1M', '--format', 'qcow2');
    guest('controller-01', '-cidata.iso', true);
    guest('compute-01', '-cidata.iso', false);
    guest('compute-02', '-unattend.iso', true);
    define(
      `<network><name>${networkName(CLUSTER)}</name><metadata>${ownerMetadata(CLUSTER)}</metadata><bridge name='kmxbrdown0'/></network>`,
      'net-define',
    );
    // Another cluster's guest of the same node name, and an unmarked look-alike of ours.
    lv.virsh('vol-create-as', poolName(OTHER), `${fqdn('compute-01', OTHER)}.qcow2`, '1M', '--format', 'qcow2');
    define(domainXml(fqdn('compute-01', OTHER), OTHER, poolName(OTHER), `${fqdn('compute-01', OTHER)}.qcow2`));
    define(domainXml(fqdn('compute-05'), undefined, IMAGES, 'debian-13.qcow2'));
    define(
      `<network><name>kubemix-${OTHER}</name><metadata>${ownerMetadata(OTHER)}</metadata><bridge name='kmxbrdown1'/></network>`,
      'net-define',
    );
    // A file somebody put into the cluster pool keeps the pool (reported), until it is gone.
    lv.virsh('vol-create-as', POOL, 'notes.img', '1M', '--format', 'raw');
    mkdirSync(definitionsDir({ cluster: META }), { recursive: true, mode: 0o700 });
    writeFileSync(join(definitionsDir({ cluster: META }), 'seed-controller-01.iso'), 'seed');
  });
  // The hypervisor's tasks run on a test host that shares this machine's filesystem.
  const hostPaths = trackHostPaths([definitionsDir({ cluster: META }), poolPath(CLUSTER)], [IMAGE_CACHE]);
  after(async () => {
    await lv?.stop();
    await net?.cleanup();
    hostPaths.cleanup();
  });

  it("removes the cluster's domains, volumes, media, network, definitions and pinned keys; keeps the rest", async () => {
    const r = await down();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(names('list', '--all', '--name'), [fqdn('compute-01', OTHER), fqdn('compute-05')]);
    assert.deepEqual(names('net-list', '--all', '--name'), [`kubemix-${OTHER}`]);
    assert.deepEqual(volumes(POOL), ['notes.img'], 'a volume not named by the contract stays');
    assert.deepEqual(volumes(IMAGES), ['debian-13.qcow2'], 'the image cache stays');
    assert.deepEqual(volumes(poolName(OTHER)), [`${fqdn('compute-01', OTHER)}.qcow2`]);
    assert.equal(existsSync(definitionsDir({ cluster: META })), false);
    assert.equal(readFileSync(knownHosts, 'utf8'), hypervisorLine, "only the hypervisor's own line stays");
  });

  it('a second down changes nothing; once the foreign file goes, the empty pool goes too', async () => {
    assert.equal((await down('--check')).code, 0, 'down --check: nothing to change');
    const again = await down();
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(volumes(POOL), ['notes.img']);
    lv.virsh('vol-delete', '--pool', POOL, '--vol', 'notes.img');
    assert.equal((await down('--check')).code, 1, 'the empty pool is left to remove');
    assert.equal((await down()).code, 0);
    assert.deepEqual(names('pool-list', '--all', '--name'), [IMAGES, poolName(OTHER)].sort());
    assert.equal((await down('--check')).code, 0);
    assert.deepEqual(names('list', '--all', '--name'), [fqdn('compute-01', OTHER), fqdn('compute-05')]);
  });
});
