// e2e tier: the libvirt driver boots real Debian 12 guests. A locally built
// cloud image (test/e2e/cloud-image.ts, pinned in the spec as a file:// URL
// with its SHA256: nothing is downloaded) is fetched into each hypervisor's
// image cache by the driver, overlaid per guest, and configured by cloud-init
// from the driver's own NoCloud seed. The hypervisors are netns test hosts,
// each running a system-mode libvirtd (test/harness/libvirt-system.ts) with
// software emulation (domain type qemu, TCG) and its own
// /var/lib/libvirt/images and /var/lib/kubemix (two hypervisors on one
// machine must not share a pool directory or definitions).
//
// One hypervisor: `kubemix up` creates the NAT network and two guests (the
// services node first, then the controller); each gets its planned address
// from the network's DHCP reservation and answers SSH with the host key
// kubemix pinned in known_hosts before first contact; the services node's
// Bind resolves the controller; `kubemix down` leaves no domain, network,
// pool, volume, bridge or qemu. Two hypervisors: a guest on each, joined by
// the driver's VXLAN mesh; they ping each other by node IP across it.
// Runs under `npm run test:e2e` only (KUBEMIX_E2E=1).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { clusterIdentity, networkName } from '../../src/drivers/libvirt/names.js';
import { overlayLinks } from '../../src/drivers/libvirt/render/overlay.js';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { readSpec } from '../../src/spec/read.js';
import { newStateDir, writeKnownHosts } from '../harness/fixture.js';
import { trackHostPaths } from '../harness/host-paths.js';
import { SystemLibvirtd, systemLibvirtAvailable } from '../harness/libvirt-system.js';
import { TestNet, type TestHost } from '../harness/netns.js';
import { cloudImage, cloudImageAvailable, type CloudImage } from './cloud-image.js';
import { kubemix, output, taskEvents, type KubemixRun } from './kubemix.js';
import { vmsAvailable } from './vm.js';

const skip =
  process.env['KUBEMIX_E2E'] === '1'
    ? (vmsAvailable() ?? systemLibvirtAvailable() ?? cloudImageAvailable())
    : 'the VM tier runs with npm run test:e2e (KUBEMIX_E2E=1)';
const log = (line: string): void => void process.stderr.write(`# e2e: ${line}\n`);
const DOMAIN = 'e2e.internal';
/**
 * What a hypervisor keeps on its own disk: the driver's definitions, and
 * libvirt's folder holding the pools and image cache (images/). The mount
 * point is /var/lib/libvirt, not images/: other tests remove an empty
 * /var/lib/libvirt/images, and a mount point removed on the machine is
 * detached from every namespace that mounted over it.
 */
const PRIVATE = ['/var/lib/kubemix', '/var/lib/libvirt'];
const imagesOf = (lab: Lab, i: number): string => join(lab.net.privateDir(lab.host(i), '/var/lib/libvirt'), 'images');
/** Small guests: 1 vCPU, 512 MiB (tcg on two shared cores). */
const SMALL = { vcpus: 1, ram: '512Mi', disk: '4Gi' };
const BOOT_LIMIT_MS = 25 * 60_000;

/** Hypervisor test hosts, each with its own libvirtd, and a spec for them. */
class Lab {
  readonly daemons: SystemLibvirtd[] = [];
  specFile = '';
  knownHosts = '';
  state = '';
  model: ClusterModel | undefined;
  private constructor(readonly net: TestNet) {}

  static async create(count: number): Promise<Lab> {
    const lab = new Lab(await TestNet.create(count, { privateDirs: PRIVATE }));
    try {
      for (const [i, h] of lab.net.hosts.entries()) {
        mkdirSync(imagesOf(lab, i), { recursive: true });
        lab.daemons.push(await SystemLibvirtd.start(h.ns, { images: imagesOf(lab, i) }));
      }
    } catch (error) {
      await lab.cleanup();
      throw error;
    }
    lab.knownHosts = writeKnownHosts(lab.net);
    lab.state = newStateDir(lab.net);
    return lab;
  }

  host(i: number): TestHost {
    return this.net.hosts[i] ?? assert.fail(`no host ${i}`);
  }

  daemon(i: number): SystemLibvirtd {
    return this.daemons[i] ?? assert.fail(`no daemon ${i}`);
  }

  /** The deployer's download cache (`up --downloads`), when the services node's download cache is planned. */
  downloads: string | undefined;

  /**
   * The spec; with a services node, the node downloads (containerd, runc, CNI
   * plugins) are files the test makes, pinned by SHA256 and seeded into the
   * deployer's cache under their upstream names (nothing leaves the machine).
   */
  writeSpec(name: string, image: CloudImage, spec: Record<string, unknown>): ClusterModel {
    const first = this.writeSpecWith(name, image, spec, {});
    const planned = assemblePlan(first).plan.downloads ?? [];
    if (planned.length === 0) return first;
    this.downloads = join(this.net.root, 'downloads');
    mkdirSync(this.downloads, { recursive: true });
    const pins: Record<string, { sha256: string }> = {};
    for (const d of planned) {
      const file = join(this.downloads, new URL(d.url).pathname.split('/').pop() ?? d.id.replaceAll('/', '-'));
      const marker = join(this.net.root, 'marker');
      writeFileSync(marker, `made by the kubemix e2e test for ${d.id}\n`);
      if (/\.(tar\.gz|tgz)$/.test(file)) spawnSync('tar', ['-czf', file, '-C', this.net.root, 'marker']);
      else writeFileSync(file, readFileSync(marker));
      pins[d.id] = { sha256: createHash('sha256').update(readFileSync(file)).digest('hex') };
    }
    return this.writeSpecWith(name, image, spec, pins);
  }

  private writeSpecWith(
    name: string,
    image: CloudImage,
    spec: Record<string, unknown>,
    pins: Record<string, { sha256: string }>,
  ): ClusterModel {
    const hypervisors = this.net.hosts.map((h, i) => ({
      name: `hv${i + 1}`,
      address: h.address,
      identityFile: this.net.clientKey,
      libvirtUri: this.daemon(i).uri,
      domainType: 'qemu',
    }));
    const text = stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name },
      spec: {
        domain: DOMAIN,
        infrastructure: { driver: 'libvirt', hypervisors },
        downloads: { ...pins, 'images/debian-12': { url: `file://${image.file}`, sha256: image.sha256 } },
        ...spec,
      },
    });
    this.specFile = join(this.net.root, `${name}.yaml`);
    writeFileSync(this.specFile, text);
    this.model = resolveModel(readSpec({ kind: 'file', path: this.specFile, text }));
    return this.model;
  }

  kubemix(command: string, ...extra: string[]): Promise<KubemixRun> {
    const args = [command, this.specFile, '--state-dir', this.state, '--known-hosts', this.knownHosts, '--json'];
    const seed = command === 'up' && this.downloads !== undefined ? ['--downloads', this.downloads] : [];
    return kubemix([...args, ...seed, ...extra], { timeoutMs: BOOT_LIMIT_MS });
  }

  /** A command on a guest over the system ssh client from hypervisor `via`'s namespace, checking kubemix's pins. */
  ssh(via: number, ip: string, command: string): string {
    const options = [
      `UserKnownHostsFile=${this.knownHosts}`,
      'StrictHostKeyChecking=yes',
      'BatchMode=yes',
      'ConnectTimeout=10',
      'LogLevel=ERROR',
    ];
    const r = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        this.host(via).ns,
        'ssh',
        '-i',
        this.net.clientKey,
        ...options.flatMap((o) => ['-o', o]),
        `root@${ip}`,
        command,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (r.status !== 0)
      throw new Error(`ssh ${ip} ${JSON.stringify(command)}: exit ${r.status ?? r.signal}\n${r.stderr}`);
    return r.stdout;
  }

  /** Runs a command in hypervisor `i`'s namespace (its view of bridges, links and processes). */
  inNs(i: number, cmd: string, args: readonly string[]): { status: number | null; stdout: string } {
    const r = spawnSync('ip', ['netns', 'exec', this.host(i).ns, cmd, ...args], { encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, stdout: r.stdout };
  }

  /** qemu processes in hypervisor `i`'s namespace. */
  qemus(i: number): string[] {
    return this.net
      .processTable(this.host(i))
      .split('\n')
      .filter((l) => l.includes('qemu-system'));
  }

  async cleanup(): Promise<void> {
    for (const d of this.daemons) d.stop();
    await this.net.cleanup();
  }
}

const node = (model: ClusterModel, role: string): ClusterModel['nodes'][number] =>
  model.nodes.find((n) => n.role === role) ?? assert.fail(`no ${role} node`);

/** The key field of the known_hosts line kubemix pinned for `name`. */
function pinnedKey(knownHosts: string, name: string): string | undefined {
  const line = readFileSync(knownHosts, 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[0] === name);
  return line?.split(' ')[2];
}

function failedTasks(run: KubemixRun): string[] {
  return taskEvents(run)
    .filter((e) => e.state === 'failed')
    .map((e) => `${e.id}: ${e.error ?? ''}`);
}

/** After `down`: nothing of the cluster in libvirt, in the hypervisor's links and processes, or in its pool folders. */
function assertNothingLeft(lab: Lab, model: ClusterModel): void {
  const { bridge, vxlan } = overlayLinks(model);
  for (const [i, lv] of lab.daemons.entries()) {
    assert.deepEqual(lv.names('list', '--all', '--name'), [], 'no domain');
    assert.deepEqual(lv.names('net-list', '--all', '--name'), [], 'no network');
    assert.deepEqual(lv.names('pool-list', '--all', '--name'), [], 'no pool');
    for (const link of [bridge, vxlan]) assert.notEqual(lab.inNs(i, 'ip', ['link', 'show', link]).status, 0, link);
    assert.deepEqual(lab.qemus(i), [], 'no qemu');
    // Only the image cache stays (kept for later clusters): no volume file of the cluster.
    const images = imagesOf(lab, i);
    assert.deepEqual(readdirSync(images), ['kubemix']);
    assert.deepEqual(readdirSync(join(images, 'kubemix')), ['images']);
    assert.deepEqual(readdirSync(lab.net.privateDir(lab.host(i), '/var/lib/kubemix')), ['libvirt']);
  }
  for (const n of model.nodes) assert.equal(pinnedKey(lab.knownHosts, n.ip), undefined, `${n.name} unpinned`);
}

describe('the libvirt driver boots Debian cloud-image guests', { skip, timeout: 90 * 60_000 }, () => {
  let image: CloudImage;
  // The mount points of the hypervisors' private folders: made here when missing, removed after.
  const mountPoints = trackHostPaths([], PRIVATE);

  before(() => {
    for (const d of PRIVATE) mkdirSync(d, { recursive: true });
    const started = Date.now();
    image = cloudImage(log);
    log(`cloud image ready after ${((Date.now() - started) / 1000).toFixed(0)} s: ${image.file}`);
  });
  after(() => mountPoints.cleanup());

  describe('one hypervisor: services node and controller', () => {
    let lab: Lab;
    let model: ClusterModel;
    before(async () => {
      lab = await Lab.create(1);
      model = lab.writeSpec('lv1', image, {
        network: { nodeCidr: '10.124.0.0/24' },
        nodes: { controlPlane: { count: 1, distro: 'debian-12', ...SMALL }, workers: [] },
        services: { distro: 'debian-12', dhcp: false, loadBalancer: false, registry: false, ...SMALL },
      });
    });
    after(async () => {
      await lab?.cleanup();
    });

    it('up to task-create-network: the guests boot, get their reserved IPs and answer with the pinned keys', async () => {
      const run = await lab.kubemix('up', '--stop-after', 'task-create-network');
      assert.equal(run.code, 0, `${failedTasks(run).join('\n')}\n${output(run)}`);
      log(`one hypervisor: up to task-create-network in ${run.seconds.toFixed(0)} s`);
      const lv = lab.daemon(0);
      const id = clusterIdentity({ name: 'lv1', domain: DOMAIN });
      assert.deepEqual(lv.names('list', '--name'), model.nodes.map((n) => `${n.name}.${id}`).sort());
      const leases = lv.virsh('net-dhcp-leases', '--network', networkName(id));
      for (const n of model.nodes) {
        // kubemix pinned the guest's key before first contact; the key the guest offers is that key.
        const pinned = pinnedKey(lab.knownHosts, n.ip);
        assert.ok(pinned, `${n.ip} pinned in ${lab.knownHosts}`);
        const offered = lab.inNs(0, 'ssh-keyscan', ['-T', '10', '-t', 'ed25519', n.ip]).stdout;
        assert.equal(offered.trim().split(' ')[2], pinned, `${n.name} offers the pinned key`);
        // The address came from libvirt's DHCP reservation for the planned MAC.
        assert.match(leases, new RegExp(`${n.mac}\\s+ipv4\\s+${n.ip.replaceAll('.', '\\.')}/24`), leases);
        const addr = lab.ssh(0, n.ip, 'ip -4 -o addr show; hostname; cloud-init status --wait --long');
        assert.match(addr, new RegExp(`inet ${n.ip.replaceAll('.', '\\.')}/24 .*dynamic`), addr);
        assert.match(addr, new RegExp(`^${n.name}$`, 'm'), 'cloud-init set the host name');
        assert.match(addr, /^status: done$/m, addr);
      }
    });

    it('up to task-create-services: the services node’s Bind resolves the controller', async () => {
      const run = await lab.kubemix('up', '--stop-after', 'task-create-services');
      assert.equal(run.code, 0, `${failedTasks(run).join('\n')}\n${output(run)}`);
      log(`one hypervisor: task-create-services in ${run.seconds.toFixed(0)} s`);
      const svc = node(model, 'services');
      const cp = node(model, 'control-plane');
      const name = `${cp.name}.lv1.${DOMAIN}`;
      const dig = lab.inNs(0, 'dig', ['+short', `@${svc.ip}`, name, 'A']);
      assert.equal(dig.stdout.trim(), cp.ip, `Bind on ${svc.ip} resolves ${name}`);
      // The controller resolves the services node through libvirt's dnsmasq (its DHCP-given resolver), which
      // forwards the cluster's zone to Bind (the seed puts only the guest's own name in /etc/hosts).
      const svcName = `${svc.name}.lv1.${DOMAIN}`;
      const got = lab.ssh(0, cp.ip, `getent ahostsv4 ${svcName}`);
      assert.match(got, new RegExp(`^${svc.ip.replaceAll('.', '\\.')}\\s`), got);
    });

    it('kubemix down leaves no domain, network, pool, volume, bridge, link or qemu', async () => {
      const run = await lab.kubemix('down', '--yes');
      assert.equal(run.code, 0, output(run));
      log(`one hypervisor: down in ${run.seconds.toFixed(0)} s`);
      assertNothingLeft(lab, model);
    });
  });

  describe('two hypervisors joined by the VXLAN mesh: a guest on each', () => {
    let lab: Lab;
    let model: ClusterModel;
    before(async () => {
      lab = await Lab.create(2);
      model = lab.writeSpec('lv2', image, {
        network: { nodeCidr: '10.125.0.0/24' },
        nodes: {
          controlPlane: { count: 1, distro: 'debian-12', hypervisor: 'hv1', ...SMALL },
          workers: [{ name: 'compute', count: 1, os: 'debian-12', hypervisor: 'hv2', ...SMALL }],
        },
        services: { enabled: false },
      });
    });
    after(async () => {
      await lab?.cleanup();
    });

    it('up to task-create-network: the guests reach each other by node IP across the mesh', async () => {
      const run = await lab.kubemix('up', '--stop-after', 'task-create-network');
      assert.equal(run.code, 0, `${failedTasks(run).join('\n')}\n${output(run)}`);
      log(`two hypervisors: up to task-create-network in ${run.seconds.toFixed(0)} s`);
      const cp = node(model, 'control-plane');
      const worker = node(model, 'worker');
      assert.equal(lab.daemon(0).names('list', '--name').length, 1);
      assert.equal(lab.daemon(1).names('list', '--name').length, 1);
      // Both are reached from the gateway hypervisor, the worker across the mesh.
      for (const [from, to] of [
        [cp, worker],
        [worker, cp],
      ] as const) {
        const out = lab.ssh(0, from.ip, `ping -c 3 -W 5 ${to.ip}`);
        assert.match(out, /3 received/, `${from.name} → ${to.name}\n${out}`);
      }
      // Full frames of the node MTU (1450) pass with don't-fragment across the mesh; the guests' NIC MTUs are logged.
      const mtu = model.cluster.network.nodeMtu;
      for (const n of [cp, worker]) log(`${n.name}: ${/mtu \d+/.exec(lab.ssh(0, n.ip, 'ip -o link show eth0'))?.[0]}`);
      const big = lab.ssh(0, cp.ip, `ping -c 1 -W 5 -M do -s ${mtu - 28} ${worker.ip}`);
      assert.match(big, /1 received/, big);
    });

    it('kubemix down removes both hypervisors’ guests, networks, bridges and VXLAN links', async () => {
      const run = await lab.kubemix('down', '--yes');
      assert.equal(run.code, 0, output(run));
      log(`two hypervisors: down in ${run.seconds.toFixed(0)} s`);
      assertNothingLeft(lab, model);
    });
  });
});
