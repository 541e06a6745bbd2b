// The node CIDR check of task-create-network against a real libvirt: a
// private session libvirtd holds other networks (defined, not started: a
// session daemon as nobody cannot make bridges, and the check reads every
// network, running or not); the planned script runs on this machine with
// the daemon's URI and refuses an overlap, naming the network and its
// range, or passes when the ranges are apart. Clusters side by side get
// their own network, bridge and pool names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { LibvirtDaemon, libvirtAvailable } from './harness/libvirt.js';

function plan(name: string, nodeCidr: string, uri: string) {
  const text = stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name },
    spec: {
      network: { nodeCidr },
      infrastructure: { driver: 'libvirt', hypervisors: [{ name: 'hv', address: '127.0.0.1', libvirtUri: uri }] },
    },
  });
  return assemblePlan(resolveModel(readSpec({ kind: 'file', path: `${name}.yaml`, text })));
}

describe('task-create-network refuses a node CIDR another libvirt network holds', { skip: libvirtAvailable() }, () => {
  let lv: LibvirtDaemon;
  before(async () => {
    lv = await LibvirtDaemon.start();
    const define = (xml: string): void => {
      const file = join(lv.root, 'net.xml');
      writeFileSync(file, xml);
      lv.virsh('net-define', '--file', file);
    };
    define(`<network><name>lab</name><bridge name='virbr77'/><ip address='10.0.0.1' netmask='255.255.0.0'/></network>`);
    define(`<network><name>v6only</name><bridge name='virbr78'/><ip family='ipv6' address='fd00::1' prefix='64'/></network>`);
  });
  after(async () => {
    await lv?.stop();
  });
  const run = (name: string, cidr: string) => {
    const task = plan(name, cidr, lv.uri).plan.tasks.find((t) => t.id === 'task-create-network/hv/network-cidr');
    assert.ok(task !== undefined && task.check === null);
    return spawnSync('sh', ['-c', task.apply.script], { encoding: 'utf8', timeout: 30_000 });
  };

  it('refuses 10.0.5.0/24 inside lab 10.0.0.0/16, naming it; passes 10.1.0.0/24', () => {
    const bad = run('alpha', '10.0.5.0/24');
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(
      bad.stderr,
      /^hv: the node network 10\.0\.5\.0\/24 overlaps libvirt network lab \(10\.0\.0\.1\/16\)$/m,
    );
    assert.match(bad.stderr, /choose another spec\.network\.nodeCidr/);
    const good = run('alpha', '10.1.0.0/24');
    assert.equal(good.status, 0, good.stderr);
    assert.match(good.stdout, /10\.1\.0\.0\/24 overlaps no other libvirt network on hv/);
  });

  it("skips the cluster's own network, and a wider CIDR around another is refused too", () => {
    const own = plan('beta', '10.0.0.0/24', lv.uri);
    const xml = own.files.find((f) => f.remotePath.endsWith('/network.xml'));
    assert.ok(xml !== undefined);
    const file = join(lv.root, 'own.xml');
    writeFileSync(file, xml.content);
    lv.virsh('net-define', '--file', file);
    // beta's own network (10.0.0.0/24) is not an overlap with itself; lab still is.
    assert.match(run('beta', '10.0.0.0/24').stderr, /overlaps libvirt network lab /);
    assert.doesNotMatch(run('beta', '10.0.0.0/24').stderr, /kubemix-beta/);
    // Another cluster on 10.0.0.0/12 overlaps both lab and beta's network, each named.
    const wide = run('gamma', '10.0.0.0/12');
    assert.match(wide.stderr, /overlaps libvirt network kubemix-beta\.kubeinit\.local \(10\.0\.0\.254\/24\)/);
    assert.match(wide.stderr, /overlaps libvirt network lab \(10\.0\.0\.1\/16\)/);
  });

  it('clusters side by side get their own network, bridge and pool', () => {
    const names = (p: ReturnType<typeof plan>) => {
      const net = p.files.find((f) => f.remotePath.endsWith('/network.xml'))?.content ?? '';
      const pool = p.files.find((f) => f.remotePath.endsWith('/pool.xml'))?.content ?? '';
      return [
        /<name>(.*)<\/name>/.exec(net)?.[1],
        /<bridge name='([^']+)'/.exec(net)?.[1],
        /<name>(.*)<\/name>/.exec(pool)?.[1],
      ];
    };
    const a = names(plan('alpha', '10.1.0.0/24', lv.uri));
    const b = names(plan('beta', '10.2.0.0/24', lv.uri));
    assert.ok(a.every((n) => n !== undefined) && b.every((n) => n !== undefined));
    for (const i of [0, 1, 2]) assert.notEqual(a[i], b[i]);
  });
});
