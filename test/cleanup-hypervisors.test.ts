// task-cleanup-hypervisors against a real libvirt: a private libvirtd (session
// mode, its own sockets and folders) holds this cluster's expected VMs, its
// leftovers, unmarked look-alikes and another cluster's VMs; the planned
// cleanup task runs over SSH on a network-namespace test host, whose virsh
// reaches the daemon through the socket in the spec's libvirtUri.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { definitionsDir, IMAGE_CACHE } from '../src/drivers/libvirt/layout.js';
import { clusterIdentity, networkName, ownerMetadata, poolName, poolPath } from '../src/drivers/libvirt/names.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import type { Plan } from '../src/plan/types.js';
import { readSpec } from '../src/spec/read.js';
import { newStateDir, run, writeKnownHosts } from './harness/fixture.js';
import { trackHostPaths } from './harness/host-paths.js';
import { LibvirtDaemon, libvirtAvailable } from './harness/libvirt.js';
import { TestNet, harnessAvailable } from './harness/netns.js';

const skip = harnessAvailable() ?? libvirtAvailable();
const CLUSTER = clusterIdentity({ name: 'lab', domain: 'kubeinit.local' });
const OTHER = clusterIdentity({ name: 'other', domain: 'kubeinit.local' });
const POOL = poolName(CLUSTER);
const STOP = { stopAfter: 'task-cleanup-hypervisors' } as const;
const ID = 'task-cleanup-hypervisors/hypervisor-01/leftovers';
const fqdn = (node: string, cluster = CLUSTER): string => `${node}.${cluster}`;

interface Disk {
  readonly pool: string;
  readonly volume: string;
  readonly cdrom?: boolean;
}

function domainXml(
  name: string,
  options: { mark?: string; disks?: readonly Disk[]; description?: string } = {},
): string {
  const disks = (options.disks ?? []).map((d, i) =>
    d.cdrom === true
      ? `<disk type='volume' device='cdrom'><driver name='qemu' type='raw'/><source pool='${d.pool}' volume='${d.volume}'/><target dev='hdc' bus='ide'/><readonly/></disk>`
      : `<disk type='volume' device='disk'><driver name='qemu' type='qcow2'/><source pool='${d.pool}' volume='${d.volume}'/><target dev='vd${'abcdef'[i]}' bus='virtio'/></disk>`,
  );
  return `<domain type='qemu'><name>${name}</name>${options.description === undefined ? '' : `<description>${options.description}</description>`}${options.mark === undefined ? '' : `<metadata>${ownerMetadata(options.mark)}</metadata>`}<memory unit='MiB'>64</memory><vcpu>1</vcpu><os><type arch='x86_64' machine='pc'>hvm</type></os><devices>${disks.join('')}</devices></domain>`;
}

function networkXml(name: string, bridge: string, mark?: string): string {
  return `<network><name>${name}</name>${mark === undefined ? '' : `<metadata>${ownerMetadata(mark)}</metadata>`}<bridge name='${bridge}'/></network>`;
}

function specText(address: string, identityFile: string, libvirtUri: string): string {
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'lab' },
    spec: {
      infrastructure: {
        driver: 'libvirt',
        hypervisors: [{ name: 'hypervisor-01', address, identityFile, libvirtUri, domainType: 'qemu' }],
      },
      nodes: { controlPlane: { count: 1 }, workers: [{ name: 'compute', count: 2, os: 'debian-13' }] },
      services: { enabled: false },
    },
  });
}

/** The plan without its cloud image downloads (not under test here; they would reach the vendor's site). */
function planOf(text: string): { plan: Plan; contents: Map<string, Buffer> } {
  const { plan, files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'lab.yaml', text })));
  const images = new Set(
    plan.tasks.filter((t) => /^task-prepare-hypervisors\/[^/]+\/image-/.test(t.id)).map((t) => t.id),
  );
  const tasks = plan.tasks
    .filter((t) => !images.has(t.id))
    .map((t) => ({ ...t, after: t.after.filter((a) => !images.has(a)) }));
  return {
    plan: { ...plan, tasks },
    contents: new Map(files.map((f) => [`${f.node}:${f.remotePath}`, Buffer.from(f.content)])),
  };
}

describe('task-cleanup-hypervisors on a real libvirt', { skip, timeout: 180_000 }, () => {
  let net: TestNet;
  let lv: LibvirtDaemon;
  let knownHosts: string;
  let state: string;
  let built: ReturnType<typeof planOf>;
  const output = (events: Awaited<ReturnType<typeof run>>['events']): string[] =>
    events
      .ofType('task:output')
      .filter((e) => e.id === ID && e.stream === 'stdout' && e.line.startsWith('removed '))
      .map((e) => e.line);

  /** A domain with its pool volumes (a disk and first-boot media), as the driver would leave it. */
  function vm(node: string, mark: string | undefined, start = false): void {
    const name = fqdn(node);
    lv.virsh('vol-create-as', POOL, `${name}.qcow2`, '1M', '--format', 'qcow2');
    lv.virsh('vol-create-as', POOL, `${name}-cidata.iso`, '1M', '--format', 'raw');
    define(domainXml(name, {
      ...(mark === undefined ? {} : { mark }),
      disks: [
        { pool: POOL, volume: `${name}.qcow2` },
        { pool: 'images', volume: 'install.iso', cdrom: true },
      ],
    }));
    if (start) lv.virsh('start', '--domain', name);
  }

  function define(xml: string, kind: 'define' | 'net-define' = 'define'): void {
    // virsh reads the file and sends the XML over the socket: the daemon never opens it.
    const file = join(net.root, 'define.xml');
    writeFileSync(file, xml);
    lv.virsh(kind, '--file', file);
  }

  before(async () => {
    [net, lv] = await Promise.all([TestNet.create(1), LibvirtDaemon.start()]);
    knownHosts = writeKnownHosts(net);
    state = newStateDir(net);
    const host = net.hosts[0] ?? assert.fail();
    built = planOf(specText(host.address, net.clientKey, lv.uri));
    for (const [pool, dir] of [
      [POOL, 'pool'],
      ['images', 'images'],
    ] as const) {
      lv.virsh('pool-define-as', '--name', pool, '--type', 'dir', '--target', lv.dir(dir));
      lv.virsh('pool-start', '--pool', pool);
    }
    lv.virsh('vol-create-as', 'images', 'install.iso', '1M', '--format', 'raw');
    // What this deployment expects and an earlier pass already created (one running).
    vm('controller-01', CLUSTER);
    vm('compute-01', CLUSTER, true);
    define(networkXml(networkName(CLUSTER), 'kmxbrtest0', CLUSTER), 'net-define');
    // Leftovers of an earlier, larger deployment of this cluster: a running VM with
    // its volumes, a volume whose domain is gone, a network from an older layout.
    vm('compute-03', CLUSTER, true);
    lv.virsh('vol-create-as', POOL, `${fqdn('compute-04')}.qcow2`, '1M', '--format', 'qcow2');
    define(networkXml('kubemix-lab-previous', 'kmxbrtest1', CLUSTER), 'net-define');
    // Look-alikes nobody marked, one with the mark's text in its (escaped) description.
    define(domainXml(fqdn('compute-05')));
    define(domainXml(fqdn('compute-06'), {
      description: ownerMetadata(CLUSTER).replaceAll('<', '&lt;').replaceAll('>', '&gt;'),
    }));
    define(networkXml('kubemix-lab-lookalike', 'kmxbrtest2'), 'net-define');
    lv.virsh('vol-create-as', 'images', `${fqdn('compute-03')}.qcow2`, '1M', '--format', 'qcow2');
    lv.virsh('vol-create-as', POOL, 'notes.img', '1M', '--format', 'raw');
    lv.virsh('vol-create-as', POOL, `x.y.${CLUSTER}.qcow2`, '1M', '--format', 'raw');
    // Other clusters' marked VMs, one whose identity merely ends like ours.
    define(domainXml(fqdn('compute-03', OTHER), { mark: OTHER }));
    define(domainXml(fqdn('compute-09', `x${CLUSTER}`), { mark: `x${CLUSTER}` }));
  });
  // The hypervisor's tasks run on a test host that shares this machine's filesystem.
  const hostPaths = trackHostPaths(
    [definitionsDir({ cluster: { name: 'lab', domain: 'kubeinit.local' } }), poolPath(CLUSTER)],
    [IMAGE_CACHE],
  );
  after(async () => {
    await lv?.stop();
    await net?.cleanup();
    hostPaths.cleanup();
  });

  it('removes only the marked leftovers the plan does not expect', async () => {
    const r = await run(built, state, knownHosts, STOP);
    assert.equal(r.error, undefined, String(r.error));
    assert.deepEqual(output(r.events).sort(), [
      `removed domain ${fqdn('compute-03')}`,
      'removed network kubemix-lab-previous',
      `removed volume ${POOL}/${fqdn('compute-03')}-cidata.iso`,
      `removed volume ${POOL}/${fqdn('compute-03')}.qcow2`,
      `removed volume ${POOL}/${fqdn('compute-04')}.qcow2`,
    ]);
    assert.deepEqual(lv.names('list', '--all', '--name'), [
      fqdn('compute-01'),
      fqdn('compute-03', OTHER),
      fqdn('compute-05'),
      fqdn('compute-06'),
      fqdn('compute-09', `x${CLUSTER}`),
      fqdn('controller-01'),
    ]);
    assert.deepEqual(lv.names('list', '--name'), [fqdn('compute-01')], 'the expected VM keeps running');
    assert.deepEqual(lv.names('net-list', '--all', '--name'), ['kubemix-lab-lookalike', networkName(CLUSTER)]);
    assert.deepEqual(volumes(POOL), [
      `${fqdn('compute-01')}-cidata.iso`,
      `${fqdn('compute-01')}.qcow2`,
      `${fqdn('controller-01')}-cidata.iso`,
      `${fqdn('controller-01')}.qcow2`,
      'notes.img',
      `x.y.${CLUSTER}.qcow2`,
    ]);
    assert.deepEqual(
      volumes('images'),
      [`${fqdn('compute-03')}.qcow2`, 'install.iso'],
      "media outside the cluster pool stays, even the leftover VM's install ISO",
    );
  });

  it('a re-run reports nothing to change', async () => {
    const r = await run(built, state, knownHosts, { ...STOP, check: true });
    assert.equal(r.error, undefined, String(r.error));
    const changing = r.events.ofType('check:result').filter((e) => e.wouldChange);
    assert.equal(r.result?.changes, 0, `would change: ${changing.map((e) => `${e.id} (${e.reason})`).join(', ')}`);
    const result = r.events.ofType('check:result').find((e) => e.id === ID);
    assert.deepEqual([result?.wouldChange, result?.reason], [false, 'check passed']);
  });

  it('a resumed run keeps the VMs this deployment created since, and removes new leftovers', async () => {
    // The create stage of this deployment made compute-02; a crashed attempt left compute-04's domain.
    vm('compute-02', CLUSTER, true);
    define(domainXml(fqdn('compute-04'), { mark: CLUSTER }));
    const r = await run(built, state, knownHosts, { ...STOP, from: ID });
    assert.equal(r.error, undefined, String(r.error));
    assert.deepEqual(output(r.events), [`removed domain ${fqdn('compute-04')}`]);
    assert.deepEqual(lv.names('list', '--name'), [fqdn('compute-01'), fqdn('compute-02')]);
    assert.ok(volumes(POOL).includes(`${fqdn('compute-02')}.qcow2`));
  });

  it('the task plans no secrets', () => {
    const t = built.plan.tasks.find((x) => x.id === ID);
    assert.deepEqual(t?.secrets, []);
    assert.doesNotMatch(`${t?.check?.script}${t?.apply.script}`, /\{\{secret:/);
  });

  it('a libvirt it cannot reach fails the task naming the URI; nothing is touched', async () => {
    const host = net.hosts[0] ?? assert.fail();
    const nowhere = `qemu:///session?socket=${lv.root}/nowhere/libvirt-sock`;
    const r = await run(planOf(specText(host.address, net.clientKey, nowhere)), newStateDir(net), knownHosts, STOP);
    const failed = r.events.ofType('task').find((e) => e.id === ID && e.state === 'failed');
    assert.ok(r.error !== undefined);
    assert.match(failed?.error ?? '', new RegExp(`cannot connect to libvirt at ${nowhere.replace(/[?/]/g, '\\$&')}`));
    assert.equal(lv.names('list', '--all', '--name').length, 7);
  });

  it('a URI that is not one is refused when the spec is read', () => {
    const host = net.hosts[0] ?? assert.fail();
    assert.throws(
      () => planOf(specText(host.address, net.clientKey, 'qemu:/system')),
      (e: { diagnostics?: { code: string; path: string; message: string }[] }) =>
        e.diagnostics?.some(
          (d) =>
            d.code === 'schema.value' &&
            d.path === 'spec.infrastructure.hypervisors[0].libvirtUri' &&
            /libvirt connection URI/.test(d.message),
        ) === true,
    );
  });

  function volumes(pool: string): string[] {
    lv.virsh('pool-refresh', '--pool', pool);
    return lv
      .virsh('vol-list', '--pool', pool)
      .split('\n')
      .filter(Boolean)
      .map((l) => l.trim().split(/\s+/)[0] ?? '')
      .sort();
  }
});
