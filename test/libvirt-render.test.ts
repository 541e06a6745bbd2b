// The libvirt driver's rendered definitions, byte for byte (golden files),
// and every one checked by the upstream validators: virt-xml-validate
// (libvirt-clients) for pool, network, volume and domain XML, and
// `cloud-init schema` (cloud-init) for user-data and network-config. Secrets
// stay `{{secret:NAME}}` references in the files; the validators read them
// filled with values of the right shape (a real generated key).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519KeyPair } from '../src/exec/ed25519.js';
import { libvirtArtifacts } from '../src/drivers/libvirt/artifacts.js';
import { domainXml, networkXml } from '../src/drivers/libvirt/render/xml.js';
import { secretRefs } from '../src/exec/secrets.js';
import { assertArtifactGolden } from './helpers/artifact-golden.js';
import { SHAPES, modelFor } from './helpers/shapes.js';

const VALIDATE = '/usr/bin/virt-xml-validate';
const CLOUD_INIT = '/usr/bin/cloud-init';

function kind(path: string): string | undefined {
  if (path.endsWith('/pool.xml')) return 'storagepool';
  if (path.endsWith('/network.xml')) return 'network';
  if (path.endsWith('/kvm-probe.xml')) return 'domain';
  if (path.endsWith('/volume.xml')) return 'storagevol';
  if (/\/domain-(kvm|qemu)\.xml$/.test(path)) return 'domain';
  return undefined;
}

/** Values of the shape the executor fills in. */
function fill(text: string): string {
  const key = ed25519KeyPair();
  return text.replace(/\{\{secret:([A-Za-z0-9_.-]+)\}\}/g, (_m, name: string) => {
    if (name.endsWith('-base64')) return Buffer.from(key.private).toString('base64');
    if (name === 'cluster-ssh-public-key') return key.public;
    throw new Error(`unexpected secret ${name}`);
  });
}

type Run = (file: string) => ReturnType<typeof spawnSync>;

function validate(run: Run, text: string, name: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-libvirt-render-'));
  try {
    const file = join(dir, 'file');
    writeFileSync(file, text);
    const r = run(file);
    assert.equal(r.status, 0, `${name}: ${String(r.stdout)}${String(r.stderr)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * /etc/hosts after cloud-init's own modules ran a seed's user-data on a Debian cloud image's hosts file, in
 * Debian's module order (write_files, once per instance, before update_etc_hosts, every boot) for two boots,
 * the files re-rooted into a temporary directory.
 */
const BOOT = `import os, sys, yaml
from cloudinit import helpers
from cloudinit.config import cc_update_etc_hosts, cc_write_files
from cloudinit.distros import debian
import logging
root, cfg = sys.argv[1], yaml.safe_load(sys.stdin)
class Cloud:
    def __init__(self):
        self.distro = debian.Distro('debian', {}, helpers.Paths({}))
        self.distro.hosts_fn = root + '/etc/hosts'
    def get_template_filename(self, name):
        return '/etc/cloud/templates/%s.tmpl' % name
files = [dict(f, path=root + f['path']) for f in cfg.get('write_files', []) if f['path'] == '/etc/hosts']
cc_write_files.write_files('write_files', files, 'root:root')
for boot in (1, 2):
    cc_update_etc_hosts.handle('update_etc_hosts', cfg, Cloud(), logging.getLogger(), [])
print(open(root + '/etc/hosts').read(), end='')`;

function hostsAfterBoots(userData: string): string {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-seed-hosts-'));
  try {
    mkdirSync(join(root, 'etc'));
    writeFileSync(join(root, 'etc', 'hosts'), '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n');
    const r = spawnSync('/usr/bin/python3', ['-c', BOOT, root], { input: userData, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The address glibc's files source gives a name: the first line that lists it. */
function resolve(hosts: string, name: string): string | undefined {
  const lines = hosts.split('\n').map((l) => l.replace(/#.*/, '').trim().split(/\s+/));
  return lines.find((l) => l.slice(1).includes(name))?.[0];
}

const PARSE = `import json, sys, yaml
from cloudinit.net.network_state import parse_net_config_data
state = parse_net_config_data(yaml.safe_load(sys.stdin)['network'])
keep = ('name', 'mac_address', 'subnets')
print(json.dumps([{k: v for k, v in i.items() if k in keep} for i in state.iter_interfaces()]))`;

/** The interfaces cloud-init's own parser makes of a network-config (Debian's python3 holds the module). */
function cloudInitInterfaces(text: string): unknown {
  const r = spawnSync('/usr/bin/python3', ['-c', PARSE], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as unknown;
}

describe('libvirt driver definitions', () => {
  for (const shape of SHAPES) {
    const files = libvirtArtifacts(modelFor(shape));
    it(`${shape}: golden files`, () => assertArtifactGolden(`${shape}/libvirt`, files));

    it(
      `${shape}: every XML passes virt-xml-validate`,
      { skip: !existsSync(VALIDATE) && 'no virt-xml-validate (libvirt-clients)' },
      () => {
        const xml = files.filter((f) => kind(f.remotePath) !== undefined);
        assert.ok(xml.length >= 4);
        for (const f of xml) {
          const type = kind(f.remotePath) ?? '';
          validate(
            (file) => spawnSync('virt-xml-validate', [file, type], { encoding: 'utf8' }),
            f.content,
            f.remotePath,
          );
        }
      },
    );

    it(`${shape}: user-data passes cloud-init schema`, { skip: !existsSync(CLOUD_INIT) && 'no cloud-init' }, () => {
      const seeds = files.filter((f) => f.remotePath.endsWith('/seed/user-data'));
      assert.ok(seeds.length >= 2);
      for (const f of seeds) {
        const run: Run = (file) => spawnSync('cloud-init', ['schema', '--config-file', file], { encoding: 'utf8' });
        validate(run, fill(f.content), f.remotePath);
      }
    });

    // cloud-init 22.4 (Debian 12) has no network-config schema (`schema --schema-type` came in 23.x): its own
    // network-config parser reads the file, and what it understood must be the planned NIC.
    it(
      `${shape}: network-config reads back through cloud-init's parser as the planned NIC`,
      { skip: !existsSync(CLOUD_INIT) && 'no cloud-init' },
      () => {
        const model = modelFor(shape);
        for (const f of files.filter((x) => x.remotePath.endsWith('/seed/network-config'))) {
          const node = model.nodes.find((n) => f.remotePath.includes(`/${n.fqdn}/`));
          assert.deepEqual(cloudInitInterfaces(f.content), [
            { name: 'eth0', mac_address: node?.mac, subnets: [{ type: 'dhcp4', routes: [] }] },
          ]);
        }
      },
    );
  }

  it(
    "the guest's own names resolve to its planned address, not loopback, after cloud-init's first and second boot",
    { skip: !existsSync(CLOUD_INIT) && 'no cloud-init' },
    () => {
      const model = modelFor('k8s-libvirt-1-1-1');
      const seeds = libvirtArtifacts(model).filter((f) => f.remotePath.endsWith('/seed/user-data'));
      assert.ok(seeds.length >= 2);
      for (const f of seeds) {
        const node = model.nodes.find((n) => f.remotePath.includes(`/${n.fqdn}/`));
        const hosts = hostsAfterBoots(fill(f.content));
        for (const name of [node?.name ?? '', node?.fqdn ?? '']) assert.equal(resolve(hosts, name), node?.ip, hosts);
        assert.equal(resolve(hosts, 'localhost'), '127.0.0.1', "the image's own lines stay");
      }
    },
  );

  it('seeds name their secrets and are written root-only; no key material in the plan', () => {
    const files = libvirtArtifacts(modelFor('k8s-libvirt-1-1-1'));
    const userData = files.filter((f) => f.remotePath.endsWith('/seed/user-data'));
    assert.ok(userData.length > 0);
    for (const f of userData) {
      assert.equal(f.mode, '0600');
      assert.deepEqual(secretRefs(f.content).sort(), [
        'cluster-ssh-public-key',
        `ssh-host-key-${/\/([^/.]+)\.[^/]*\/seed\//.exec(f.remotePath)?.[1]}-base64`,
      ]);
      assert.doesNotMatch(f.content, /PRIVATE KEY/);
    }
  });

  it('VNC listens on the loopback only; the planned MAC and sizes are in the domain', () => {
    const model = modelFor('k8s-libvirt-1-1-1');
    for (const node of model.nodes) {
      const xml = domainXml(model, node, 'kvm');
      assert.match(xml, /<graphics type='vnc' autoport='yes' listen='127\.0\.0\.1'>/);
      assert.doesNotMatch(xml, /0\.0\.0\.0/);
      assert.match(xml, new RegExp(`<mac address='${node.mac}'/>`));
      assert.match(xml, new RegExp(`<memory unit='MiB'>${node.resources?.ramMiB}</memory>`));
      assert.match(xml, /<serial type='pty'>/);
    }
  });

  it('the network reserves every planned MAC for its IP and has no dynamic range', () => {
    const model = modelFor('k8s-libvirt-3-2-1');
    const xml = networkXml(model);
    for (const n of model.nodes)
      assert.ok(xml.includes(`<host mac='${n.mac}' name='${n.name}' ip='${n.ip}'/>`), n.name);
    assert.doesNotMatch(xml, /<range /);
  });

  it('hostile values are escaped, never markup', () => {
    const model = modelFor('k8s-libvirt-1-1-1');
    const evil = { ...model, cluster: { ...model.cluster, name: `a'b<c>&"d` } };
    const xml = networkXml(evil);
    assert.ok(xml.includes('a&apos;b&lt;c&gt;&amp;&quot;d'));
    assert.doesNotMatch(xml, /a'b<c>/);
  });
});
