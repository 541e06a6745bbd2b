// Host prep scripts run for real where that is safe: the /etc/hosts and
// /etc/fstab edits against copies; firewalld openings wherever firewalld runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { planFor, scratch } from './helpers/shapes.js';

const sh = (script: string): number =>
  spawnSync('sh', ['-s'], { input: script, stdio: ['pipe', 'ignore', 'pipe'] }).status ?? -1;

describe('Linux host prep', () => {
  const { plan } = planFor('k8s-libvirt-3-2-1');
  const byId = (id: string) => plan.tasks.find((t) => t.id === id);
  const tmp = scratch('prep');
  after(() => tmp.remove());

  it('every Linux cluster node gets the prep tasks; the services node does not', () => {
    const hosts = new Set(plan.tasks.filter((t) => t.stage === 'task-prepare-cluster').map((t) => t.host));
    assert.deepEqual([...hosts].sort(), [
      'compute-01',
      'compute-02',
      'controller-01',
      'controller-02',
      'controller-03',
    ]);
    const names = plan.tasks
      .filter((t) => t.host === 'compute-01' && t.stage === 'task-prepare-cluster')
      .map((t) => t.name)
      .sort();
    assert.deepEqual(names, [
      'cgroup-v2',
      'cni-plugins',
      'containerd',
      'containerd-binaries',
      'crictl-binary',
      'download-tools',
      'etc-hosts',
      'firewall',
      'hostname',
      'kernel-modules',
      'kubeadm-binary',
      'kubectl-binary',
      'kubelet-binary',
      'kubelet-service',
      'registry-ca',
      'runc',
      'swap-off',
      'sysctls',
      'time-sync',
    ]);
  });

  it('/etc/hosts: check fails, apply adds the block once and keeps other lines, check passes', () => {
    const t = byId('task-prepare-cluster/compute-01/etc-hosts');
    assert.ok(t?.check);
    const hosts = join(tmp.dir, 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n# BEGIN kubemix\n10.9.9.9 stale\n# END kubemix\n');
    const local = (s: string): string => s.replaceAll('/etc/hosts', hosts);
    assert.notEqual(sh(local(t.check.script)), 0);
    assert.equal(sh(local(t.apply.script)), 0);
    assert.equal(sh(local(t.apply.script)), 0);
    assert.equal(sh(local(t.check.script)), 0);
    const text = readFileSync(hosts, 'utf8');
    assert.match(text, /^127\.0\.0\.1 localhost$/m);
    assert.doesNotMatch(text, /stale/);
    assert.equal(text.match(/# BEGIN kubemix/g)?.length, 1);
    assert.match(text, /^10\.0\.0\.253 api\.k8scluster\.kubeinit\.local$/m);
  });

  it('swap-off comments out swap lines in fstab and nothing else', () => {
    const t = byId('task-prepare-cluster/compute-01/swap-off');
    const sed = t?.apply.script.split('\n').find((l) => l.startsWith('sed '));
    assert.ok(sed !== undefined);
    const fstab = join(tmp.dir, 'fstab');
    writeFileSync(fstab, 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n#/old none swap sw 0 0\n');
    assert.equal(sh(sed.replace('/etc/fstab', fstab)), 0);
    assert.equal(
      readFileSync(fstab, 'utf8'),
      'UUID=1 / ext4 defaults 0 1\n#/swapfile none swap sw 0 0\n#/old none swap sw 0 0\n',
    );
  });

  it('every Linux node gets firewalld openings per role (a no-op where firewalld does not run)', () => {
    const model = resolveModel(
      readSpec({
        kind: 'kubeinit',
        spec: 'k8s-libvirt-1-2-1',
        hypervisors: 'hv1.example.com',
        nodes: '[[when_group=compute_nodes,os=centos]]',
      }),
    );
    const fw = assemblePlan(model).plan.tasks.filter((t) => t.name === 'firewall');
    assert.deepEqual(
      fw.map((t) => t.host),
      ['compute-01', 'compute-02', 'controller-01'],
    );
    assert.match(fw[0]?.apply.script ?? '', /--add-port=4789\/udp/);
    assert.doesNotMatch(fw[0]?.apply.script ?? '', /6443/);
    assert.match(fw[2]?.apply.script ?? '', /--add-port=6443\/tcp/);
    assert.match(fw[0]?.check?.script ?? '', /^systemctl is-active --quiet firewalld \|\| exit 0$/m);
    const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], {
      input: `${fw[0]?.check?.script}\n${fw[0]?.apply.script}`,
      encoding: 'utf8',
    });
    assert.equal(lint.status, 0, lint.stdout);
  });
});
