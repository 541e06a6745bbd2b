// A Windows guest's creation tasks against a real system-mode libvirtd
// (test/harness/libvirt-system.ts) — without Windows: no Windows ISO can be
// had or booted here. The install ISO and virtio-win are small ISOs made
// with xorriso, given as file:/// paths with their SHA256. The executor runs
// the hypervisor's tasks of a cluster with one Windows worker up to its
// guest task: both ISOs cached, the empty disk, the unattend media built
// into an ISO volume, the domain defined and started under TCG on OVMF
// (firmware='efi'). The media are read back with isoinfo (Joliet names, as
// Windows Setup reads them) and compared with the files the plan renders,
// filled with the run's secrets; the files placed to build them are gone.
// Then the Setup wait refuses a guest that stopped for another reason, and
// the eject task (which the plan runs only once SSH answered with the pinned
// key) empties the drive and deletes the volume, idempotently; `kubemix
// down` leaves nothing, also no boot unit of the cluster's mesh (written in
// /etc/systemd/system under this test cluster's own name, and removed after),
// while a unit of that name kubemix did not write stays.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyPlan } from '../src/exec/apply-plan.js';
import { SecretStore } from '../src/exec/secrets.js';
import { definitionsDir, IMAGE_CACHE, installIsoPath, VIRTIO_WIN_ISO } from '../src/drivers/libvirt/layout.js';
import { clusterIdentity, poolName, poolPath } from '../src/drivers/libvirt/names.js';
import { overlayUnit, overlayUnitName, UNIT_DIR } from '../src/drivers/libvirt/render/overlay.js';
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

const OVMF = '/usr/share/qemu/firmware/60-edk2-x86_64.json';
const skip =
  harnessAvailable() ??
  systemLibvirtAvailable() ??
  (existsSync('/usr/bin/xorriso') && existsSync('/usr/bin/isoinfo') ? undefined : 'no xorriso / isoinfo') ??
  (existsSync(OVMF) ? undefined : 'no OVMF firmware (Debian ovmf)');
const META = { name: 'wm', domain: 'win.test' };
const CLUSTER = clusterIdentity(META);
const HV = 'hypervisor-01';

function lstatExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Only the given tasks, and only edges between them. */
function only(plan: Plan, keep: (t: Plan['tasks'][number]) => boolean): Plan {
  const tasks = plan.tasks.filter(keep);
  const ids = new Set(tasks.map((t) => t.id));
  return { ...plan, tasks: tasks.map((t) => ({ ...t, after: t.after.filter((a) => ids.has(a)) })) };
}

function iso(root: string, name: string, label: string): { path: string; sha256: string } {
  const src = join(root, `${name}-src`);
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, 'README.TXT'), `${name}: a stand-in; no Windows here\n`);
  const path = join(root, `${name}.iso`);
  sh('xorriso', ['-as', 'mkisofs', '-quiet', '-volid', label, '-joliet', '-output', path, src]);
  return { path, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
}

describe('a Windows guest on a real system libvirtd: media, domain, eject', { skip, timeout: 600_000 }, () => {
  let net: TestNet;
  let lv: SystemLibvirtd;
  let model: ClusterModel;
  let specFile: string;
  let state: string;
  let knownHosts: string;
  let win: ClusterModel['nodes'][number];
  const cached: string[] = [];
  const unitFiles: string[] = [];
  const hostPaths = trackHostPaths([definitionsDir({ cluster: META }), poolPath(CLUSTER)], [IMAGE_CACHE]);

  before(async () => {
    net = await TestNet.create(1);
    const host = net.hosts[0] ?? assert.fail();
    lv = await SystemLibvirtd.start(host.ns);
    const ws = iso(net.root, 'ws2022', 'SSS_X64FREE_EN-US_DV9');
    const virtio = iso(net.root, 'virtio-win', 'virtio-win-0.1');
    specFile = join(net.root, 'wm.yaml');
    ({ model } = writeLibvirtSpec(specFile, {
      meta: META,
      network: { nodeCidr: '10.124.0.0/24' },
      hypervisor: {
        name: HV,
        address: host.address,
        identityFile: net.clientKey,
        libvirtUri: lv.uri,
        domainType: 'qemu',
      },
      nodes: {
        controlPlane: { count: 1, ...SMALL },
        workers: [{ name: 'win', count: 1, os: 'windows-2022', ...SMALL, ram: '512Mi' }],
      },
      services: { enabled: false },
      downloads: {
        'images/windows-2022': { url: `file://${ws.path}`, sha256: ws.sha256 },
        'images/virtio-win': { url: `file://${virtio.path}`, sha256: virtio.sha256 },
      },
    }));
    win = model.nodes.find((n) => n.osFamily === 'windows') ?? assert.fail('no Windows node');
    for (const f of [installIsoPath('windows-2022'), VIRTIO_WIN_ISO]) if (!existsSync(f)) cached.push(f, `${f}.source`);
    knownHosts = writeKnownHosts(net);
    state = newStateDir(net);
  });
  after(() => {
    for (const f of unitFiles) rmSync(f, { force: true });
    lv?.stop();
    for (const f of cached) spawnSync('rm', ['-f', f]);
    void net?.cleanup();
    hostPaths.cleanup();
    spawnSync('rmdir', [join(LIBVIRT_IMAGES, 'kubemix'), LIBVIRT_IMAGES]);
  });

  const domain = () => win.fqdn;
  const media = () => `${win.fqdn}-unattend.iso`;
  const run = async (keep: (t: Plan['tasks'][number]) => boolean, stateDir = state) => {
    const target = inMemoryTarget(assemblePlan(model), stateDir);
    // Two presses of Enter instead of a minute of them: no ISO here asks for one.
    const plan = only(target.plan, keep);
    const fast = {
      ...plan,
      tasks: plan.tasks.map((t) => ({
        ...t,
        apply: { ...t.apply, script: t.apply.script.replace('presses=30', 'presses=2') },
      })),
    };
    return applyPlan(fast, target.artifacts, {
      stateDir,
      knownHostsFile: knownHosts,
      signal: new AbortController().signal,
      ...FAST,
    });
  };
  // The hypervisor's tasks up to the Windows guest's: no Linux guest (nothing boots here), no waits.
  const upToGuest = (t: Plan['tasks'][number]) =>
    t.host === HV &&
    !/^(ssh|setup|eject)-/.test(t.name) &&
    !(t.name.startsWith('guest-') && t.name !== `guest-${win.name}`) &&
    !/^image-debian/.test(t.name);

  it('caches both ISOs, builds the unattend media into an ISO volume and starts the domain on OVMF', async () => {
    const result = await run(upToGuest);
    assert.deepEqual(result.failed, []);
    for (const f of [installIsoPath('windows-2022'), VIRTIO_WIN_ISO]) assert.ok(existsSync(f), f);
    assert.deepEqual(lv.names('list', '--name'), [domain()]);
    const xml = lv.virsh('dumpxml', '--domain', domain());
    assert.match(xml, /<loader [^>]*type='pflash'[^>]*>/, 'UEFI firmware');
    assert.match(xml, /<target dev='vda' bus='virtio'\/>\s*<boot order='1'\/>/);
    assert.ok(xml.includes(`<source file='${installIsoPath('windows-2022')}'`), 'install ISO on sda');
    assert.match(xml, /<target dev='sda' bus='sata'\/>\s*<readonly\/>\s*<boot order='2'\/>/);
    assert.ok(xml.includes(`volume='${media()}'`), 'unattend media attached');
    assert.ok(xml.includes(`<source file='${VIRTIO_WIN_ISO}'`), 'virtio-win attached');
    assert.match(xml, /<graphics type='vnc' port='\d+' autoport='yes' listen='127\.0\.0\.1'>/);
    assert.match(lv.virsh('vncdisplay', '--domain', domain()), /^127\.0\.0\.1:\d+/);
    // The files placed to build the media (secrets) are gone; the media volume is root-only.
    const g = `${definitionsDir(model)}/${win.fqdn}`;
    assert.equal(existsSync(`${g}/unattend`), false, 'the placed media files are deleted');
    const volume = join(poolPath(CLUSTER), media());
    assert.equal((statSync(volume).mode & 0o777).toString(8), '600');
  });

  it("the media read back with isoinfo are the rendered files, filled with the run's secrets", async () => {
    const file = join(net.root, 'unattend.iso');
    lv.virsh('vol-download', '--pool', poolName(CLUSTER), '--vol', media(), '--file', file);
    assert.match(sh('isoinfo', ['-d', '-i', file]), /^Volume id: KUBEMIX$/m);
    const joliet = sh('isoinfo', ['-J', '-f', '-i', file]).split('\n').filter(Boolean).sort();
    assert.deepEqual(joliet, [
      '/Autounattend.xml',
      '/kubemix',
      '/kubemix/SetupComplete.cmd',
      '/kubemix/kubemix-setup.ps1',
    ]);
    const store = await SecretStore.open(join(state, 'secrets.json'));
    const { files } = assemblePlan(model);
    const dir = `${definitionsDir(model)}/${win.fqdn}/unattend/`;
    const rendered = files.filter((f) => f.node === HV && f.remotePath.startsWith(dir));
    assert.equal(rendered.length, 3);
    for (const f of rendered) {
      const inIso = sh('isoinfo', ['-J', '-i', file, '-x', `/${f.remotePath.slice(dir.length)}`]);
      if (!f.remotePath.endsWith('.cmd')) assert.ok(f.content.includes('{{secret:'), `${f.remotePath} names secrets`);
      assert.equal(inIso, store.fill(f.content, 'test'), f.remotePath);
      assert.doesNotMatch(inIso, /\{\{secret:/);
    }
  });

  it('a second run changes nothing: same domain, same media, nothing placed again', async () => {
    const uuid = lv.virsh('domuuid', '--domain', domain());
    const before = lv.virsh('vol-info', '--pool', poolName(CLUSTER), '--vol', media());
    // A fresh state directory: no journal, only the checks decide.
    const fresh = newStateDir(net);
    spawnSync('cp', [join(state, 'secrets.json'), join(fresh, 'secrets.json')]);
    const result = await run(upToGuest, fresh);
    assert.deepEqual(result.failed, []);
    assert.equal(lv.virsh('domuuid', '--domain', domain()), uuid);
    assert.equal(lv.virsh('vol-info', '--pool', poolName(CLUSTER), '--vol', media()), before);
    assert.equal(existsSync(`${definitionsDir(model)}/${win.fqdn}/unattend`), false);
  });

  it('the Setup wait refuses a guest that stopped for another reason than Setup powering it off', async () => {
    lv.virsh('destroy', '--domain', domain());
    await assert.rejects(
      run((t) => t.name === `setup-${win.name}`, newStateDir(net)),
      /stopped during Windows Setup \(shut off \(destroyed\)\): see its console \(virsh vncdisplay /,
    );
    lv.virsh('start', '--domain', domain());
  });

  it('eject: the drive emptied (live and persistent), the volume deleted; again changes nothing', async () => {
    const eject = (t: Plan['tasks'][number]) => t.name === `eject-${win.name}`;
    const result = await run(eject, newStateDir(net));
    assert.deepEqual(result.failed, []);
    for (const flags of [[], ['--inactive']]) {
      const xml = lv.virsh('dumpxml', ...flags, '--domain', domain());
      assert.ok(!xml.includes(media()), `${flags.join(' ')} config names no media`);
      assert.match(xml, /<target dev='sdb' bus='sata'\/>/, 'the empty drive stays');
    }
    const vols = lv.virsh('vol-list', '--pool', poolName(CLUSTER));
    assert.ok(!vols.includes(media()), vols);
    assert.deepEqual(lv.names('list', '--name'), [domain()], 'the guest keeps running');
    const again = await run(eject, newStateDir(net));
    assert.deepEqual(again.failed, []);
  });

  it('kubemix down removes the domain, its disk, the pool, the definitions and a boot unit of the mesh it wrote', async () => {
    // The cluster's mesh unit as a multi-hypervisor layout leaves it (machine paths, named by this test's cluster).
    const unit = join(UNIT_DIR, overlayUnitName(model));
    const wants = join(UNIT_DIR, 'multi-user.target.wants', overlayUnitName(model));
    unitFiles.push(unit, wants);
    mkdirSync(dirname(wants), { recursive: true });
    writeFileSync(unit, overlayUnit(model, '/nonexistent/overlay-up.sh'));
    symlinkSync(unit, wants);
    const down = () =>
      runCli(['down', specFile, '--yes', '--state-dir', state, '--known-hosts', knownHosts], {
        env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
      });
    const r = await down();
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lv.names('list', '--all', '--name'), []);
    assert.deepEqual(lv.names('pool-list', '--all', '--name'), []);
    assert.equal(existsSync(definitionsDir({ cluster: META })), false);
    assert.equal(existsSync(unit), false, 'our boot unit is gone');
    assert.equal(existsSync(wants) || lstatExists(wants), false, 'and its enabling link');
    // A unit of that name kubemix did not write stays.
    writeFileSync(unit, '[Unit]\nDescription=not kubemix\n');
    const again = await down();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(readFileSync(unit, 'utf8'), '[Unit]\nDescription=not kubemix\n');
  });
});
