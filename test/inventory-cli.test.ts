// `kubemix inventory import` and `export` as a user runs them.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import { listFromAnsible, listInventory } from '../src/interop/inventory/list.js';
import { readInventory } from '../src/interop/inventory/read.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';
import { ansibleList, ansibleMissing } from './helpers/ansible.js';

const INV = (name: string) => repoPath('test', 'fixtures', 'inventories', name);
const tmp = mkdtempSync(join(tmpdir(), 'kubemix-inventory-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

type Host = {
  name: string;
  address: string;
  ip?: string;
  roles: string[];
  os: string;
  user: string;
  port: number;
  identityFile?: string;
  bastion?: { address: string; user?: string; port?: number };
};

async function importHosts(file: string): Promise<{ hosts: Host[]; stderr: string; doc: Record<string, any> }> {
  const r = await runCli(['inventory', 'import', INV(file)]);
  assert.equal(r.code, 0, r.stderr);
  const doc = parse(r.stdout) as Record<string, any>;
  return { hosts: doc['spec'].infrastructure.hosts as Host[], stderr: r.stderr, doc };
}

describe('kubemix inventory import', () => {
  it('kubernetes-for-windows inventory: every role kept, Windows by group, defaults warned with their line', async () => {
    const { hosts, stderr, doc } = await importHosts('kubernetes-for-windows.ini');
    assert.deepEqual(
      hosts.map((h) => [h.name, h.roles.join('+'), h.os]),
      [
        ['ubuntu01', 'control-plane', 'debian-13'],
        ['ubuntu02', 'control-plane+worker', 'debian-13'],
        ['ubuntu03', 'worker', 'debian-13'],
        ['windows01', 'worker', 'windows-2022'],
        ['windows02', 'worker', 'windows-2022'],
      ],
    );
    assert.deepEqual(
      hosts.map((h) => h.user),
      ['root', 'root', 'root', 'Administrator', 'Administrator'],
    );
    assert.equal(doc['spec'].network.nodeCidr, '10.3.0.0/29');
    assert.equal(doc['spec'].services.enabled, false);
    assert.match(
      stderr,
      /kubernetes-for-windows\.ini:43 spec\.infrastructure\.hosts\[3\]\.os: .*windows-2022.*\[inventory\.default-os\]/,
    );
    assert.match(stderr, /kubernetes-for-windows\.ini:16 .*2 control-plane hosts.*\[inventory\.even-control-plane\]/);
    assert.match(stderr, /kubernetes-for-windows\.ini:11 .*ubuntu03 is in etcd.*\[inventory\.etcd-on-worker\]/);
    assert.match(stderr, /kubernetes-for-windows\.ini:9 .*10\.3\.0\.0\/29.*\[inventory\.default-network\]/);
    assert.doesNotMatch(stderr, /nodes\.even-control-plane/);
  });

  it('kubespray: ip is the node address, ansible_host the SSH address, the bastion host is the jump host', async () => {
    const { hosts, stderr } = await importHosts('kubespray.ini');
    assert.equal(hosts.length, 5);
    assert.deepEqual(hosts[0], {
      name: 'node1',
      address: '198.51.100.11',
      ip: '10.10.1.11',
      roles: ['control-plane'],
      os: 'debian-13',
      user: 'ubuntu',
      port: 22,
      identityFile: '~/.ssh/kubespray_ed25519',
      bastion: { address: '198.51.100.2', user: 'jump' },
    });
    assert.match(stderr, /\[inventory\.bastion\]/);
  });

  it('ProxyCommand, ProxyJump and -J become bastions; powershell marks Windows', async () => {
    const { hosts } = await importHosts('bastion.ini');
    assert.deepEqual(
      hosts.map((h) => h.bastion),
      [
        { address: '198.51.100.7', user: 'jump' },
        { address: '198.51.100.8', user: 'ops', port: 2222 },
        { address: '198.51.100.9' },
        undefined,
      ],
    );
    assert.equal(hosts[3]?.os, 'windows-2022');
    assert.equal(hosts[3]?.identityFile, '/keys/win');
  });

  it('YAML: kubernetes_node_hostname names the node; a WinRM port is not an SSH port', async () => {
    const { hosts, stderr } = await importHosts('windows.yaml');
    assert.deepEqual(
      hosts.map((h) => h.name),
      ['ubuntu01', 'ubuntu02', 'win-01', 'win-02'],
    );
    assert.equal(hosts[2]?.port, 22);
    assert.match(stderr, /windows\.yaml:17 .*ansible_port 5986 is for winrm/);
  });

  it('etcd-only hosts and hosts outside the cluster are left out, with a warning for etcd', async () => {
    const { hosts, stderr } = await importHosts('later.ini');
    assert.deepEqual(
      hosts.map((h) => h.name),
      ['m1', 'm2', 'n1'],
    );
    assert.equal(hosts[0]?.port, 2222);
    assert.match(stderr, /later\.ini:23 e1: e1 is an etcd-only host.*\[inventory\.etcd-only\]/);
  });

  it('writes --out, which kubemix validate accepts', async () => {
    const out = join(tmp, 'seed.yaml');
    assert.equal((await runCli(['inventory', 'import', INV('kubespray.yaml'), '--out', out])).code, 0);
    const v = await runCli(['validate', out]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(readFileSync(out, 'utf8'), /^# yaml-language-server: \$schema=/);
  });

  for (const name of ['unclosed-quote.ini', 'undefined-child.ini', 'syntax.yaml']) {
    it(`malformed ${name}: exit 2 with file:line, no stack trace`, async () => {
      const r = await runCli(['inventory', 'import', INV(`malformed/${name}`)]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, new RegExp(`${name.replace('.', '\\.')}:\\d+`));
      assert.ok(!hasStackTrace(r.stderr), r.stderr);
    });
  }

  it('a Windows host in the control plane is exit 2 naming its line', async () => {
    const file = join(tmp, 'wincp.ini');
    writeFileSync(
      file,
      '[kube_control_plane]\ncp1 ansible_host=10.0.0.1\nwin1 ansible_host=10.0.0.2 ansible_connection=winrm\n',
    );
    const r = await runCli(['inventory', 'import', file]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /wincp\.ini:3 .*\[inventory\.windows-control-plane\]/);
  });
});

describe('kubemix inventory export', { skip: ansibleMissing() }, () => {
  const specs = [
    'examples/k8s-libvirt-1-1-1.yaml',
    'examples/k8s-libvirt-3-2-1.yaml',
    'examples/existing-host-gw.yaml',
  ];
  for (const spec of specs) {
    for (const format of ['ini', 'yaml']) {
      it(`${spec} as ${format}: ansible-inventory reads the hosts, groups and membership kubemix wrote`, async () => {
        const file = join(tmp, `${spec.replace(/\W/g, '_')}.${format}`);
        const r = await runCli(['inventory', 'export', spec, '--format', format, '--out', file]);
        assert.equal(r.code, 0, r.stderr);
        const theirs = listFromAnsible(ansibleList(file));
        assert.deepEqual(listInventory(readInventory(readFileSync(file, 'utf8'), file)), theirs);
        const plan = JSON.parse((await runCli(['plan', spec, '--json'])).stdout) as {
          nodes: { name: string; role: string; osFamily: string }[];
        };
        const members = (g: string) => theirs.groups[g]?.hosts ?? [];
        for (const n of plan.nodes) {
          assert.equal(members(n.osFamily).includes(n.name), true, `${n.name} in ${n.osFamily}`);
          const group =
            { 'control-plane': 'kube_control_plane', worker: 'kube_node', services: 'services' }[n.role] ?? '';
          assert.ok(members(group).includes(n.name), `${n.name} in ${group}`);
          if (n.osFamily === 'windows') assert.equal(theirs.hosts[n.name]?.['ansible_shell_type'], 'powershell');
        }
        assert.deepEqual(members('etcd'), members('kube_control_plane'));
        assert.deepEqual(theirs.groups['k8s_cluster']?.children, ['kube_control_plane', 'kube_node']);
      });
    }
  }

  it('import → export → import keeps hosts and roles', async () => {
    const spec = join(tmp, 'round.yaml');
    assert.equal((await runCli(['inventory', 'import', INV('kubernetes-for-windows.ini'), '--out', spec])).code, 0);
    const exported = join(tmp, 'round.ini');
    assert.equal((await runCli(['inventory', 'export', spec, '--out', exported])).code, 0);
    const again = await runCli(['inventory', 'import', exported]);
    assert.equal(again.code, 0, again.stderr);
    const roles = (text: string) =>
      (parse(text) as Record<string, any>)['spec'].infrastructure.hosts.map(
        (h: Host) => `${h.name}:${h.roles.join('+')}:${h.os}`,
      );
    assert.deepEqual(roles(again.stdout), roles(readFileSync(spec, 'utf8')));
  });
});
