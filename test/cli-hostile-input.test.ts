// Hostile and careless input through the real CLI: every case is exit 2 with
// a message naming the flag, file:line or field, no stack trace, and nothing
// written — never a crash (exit 4), a blow-up or a location in a spec the
// user never saw.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateClusterCa } from '../src/exec/cluster-ca.js';
import { redactArgv } from '../src/cli/failure.js';
import { clusterJsonSchema } from '../src/spec/schema.js';
import { SCHEMA_ID } from '../src/cli/spec-yaml.js';
import { YAML } from '../src/spec/yaml-lib.js';
import { hasStackTrace, repoPath, runCli, type CliResult } from './helpers/cli.js';
import { makePki, type TestPki } from './helpers/pki.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('hostile');
after(() => tmp.remove());
const file = (name: string, text: string): string => {
  writeFileSync(join(tmp.dir, name), text);
  return name;
};
const cli = (argv: string[]): Promise<CliResult> => runCli(argv, { cwd: tmp.dir });

/** Exit 2, the code and where in stderr, no stack trace, no spec printed. */
function refused(r: CliResult, code: string, where: RegExp): void {
  assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr}`);
  assert.match(r.stderr, new RegExp(`\\[${code.replace('.', '\\.')}\\]`), r.stderr);
  assert.match(r.stderr, where, r.stderr);
  assert.equal(hasStackTrace(r.stderr), false, r.stderr);
  assert.doesNotMatch(r.stderr, /internal error|crash/i);
  assert.equal(r.stdout, '');
}

describe("guard install: the CA key must be the CA certificate's", () => {
  it('a key of another CA, a non-CA certificate, a missing file: exit 2 guard.ca, nothing written', async () => {
    const ca = generateClusterCa();
    const other = generateClusterCa();
    file('ca.crt', ca.cert);
    file('other.key', other.key);
    file('ca.key', ca.key);
    const args = (cert: string, key: string): string[] => [
      'guard',
      'install',
      '--cluster',
      'k8s-libvirt-1-1-1',
      '--ca-cert',
      cert,
      '--ca-key',
      key,
      '--out',
      'guard-out',
    ];
    refused(
      await cli(args('ca.crt', 'other.key')),
      'guard.ca',
      /--ca-key other\.key: this key does not belong to the certificate --ca-cert ca\.crt/,
    );
    const pkiDir = join(tmp.dir, 'pki-install');
    mkdirSync(pkiDir);
    const leaf = makePki(pkiDir).server('leaf');
    refused(await cli(args(leaf.cert, leaf.key)), 'guard.ca', /not a CA certificate/);
    refused(await cli(args('ca.key', 'ca.key')), 'guard.ca', /--ca-cert ca\.key: not a PEM certificate/);
    refused(await cli(args('nope.crt', 'ca.key')), 'guard.ca', /--ca-cert nope\.crt: cannot read it \(ENOENT\)/);
    assert.ok(!readdirSync(tmp.dir).includes('guard-out'));
    const ok = await cli(args('ca.crt', 'ca.key'));
    assert.equal(ok.code, 0, ok.stderr);
  });
});

describe('guard serve: TLS files checked before listening', () => {
  let pki: TestPki;
  before(() => {
    const dir = join(tmp.dir, 'pki-serve');
    mkdirSync(dir);
    pki = makePki(dir);
  });
  const serve = (cert: string, key: string): Promise<CliResult> =>
    cli([
      'guard',
      'serve',
      '--cluster',
      'k8s-libvirt-1-1-1',
      '--listen',
      '127.0.0.1:0',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      '--offline',
    ]);

  it('a key that does not match the certificate: exit 2 naming --tls-key', async () => {
    const a = pki.server('a');
    const b = pki.server('b');
    refused(
      await serve(a.cert, b.key),
      'guard.tls',
      /--tls-key .*b\.key: this key does not belong to the certificate --tls-cert .*a\.crt/,
    );
  });

  it('a certificate file that is not PEM, a key file that is not a key: exit 2 naming the flag', async () => {
    const a = pki.server('c');
    refused(
      await serve(file('garbage.crt', 'not a certificate\n'), a.key),
      'guard.tls',
      /--tls-cert garbage\.crt: not a PEM certificate/,
    );
    refused(await serve(a.cert, a.cert), 'guard.tls', /--tls-key .*c\.crt: not a PEM private key/);
  });

  it('an address already in use: exit 2 naming --listen, not a crash', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as AddressInfo).port;
    const d = pki.server('d');
    try {
      const r = await cli([
        'guard',
        'serve',
        '--cluster',
        'k8s-libvirt-1-1-1',
        '--listen',
        `127.0.0.1:${port}`,
        '--tls-cert',
        d.cert,
        '--tls-key',
        d.key,
        '--offline',
      ]);
      refused(r, 'flags.listen', new RegExp(`--listen 127\\.0\\.0\\.1:${port}: cannot listen there \\(EADDRINUSE\\)`));
    } finally {
      taken.close();
    }
  });

  it('the crash log keeps every flag and hides only secret values', () => {
    const argv = [
      'guard',
      'serve',
      '--tls-key',
      'key.pem',
      '--offline',
      '--listen',
      '0.0.0.0:8443',
      '--token=abc',
      '--no-pull-secrets',
      '--cluster',
      'spec.yaml',
    ];
    assert.deepEqual(redactArgv(argv), [
      'guard',
      'serve',
      '--tls-key',
      '<redacted>',
      '--offline',
      '--listen',
      '0.0.0.0:8443',
      '--token=<redacted>',
      '--no-pull-secrets',
      '--cluster',
      'spec.yaml',
    ]);
  });
});

describe('inventory import: bounded, and errors at the inventory line', () => {
  const importOf = (name: string, ...flags: string[]): Promise<CliResult> =>
    cli(['inventory', 'import', name, '--out', 'imported.yaml', ...flags]);
  const noSpecWritten = (): void => assert.ok(!readdirSync(tmp.dir).includes('imported.yaml'));

  it('a YAML alias bomb and an alias to no anchor: exit 2 naming file:line', async () => {
    const bomb = [
      'all:',
      '  vars:',
      '    a: &a [x, x, x, x, x, x, x, x, x, x]',
      '    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      '    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      '    d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      '  hosts:',
      '    cp1:',
      '',
    ].join('\n');
    refused(await importOf(file('bomb.yaml', bomb)), 'yaml.aliases', /bomb\.yaml:\d+/);
    refused(
      await importOf(file('unresolved.yaml', 'all:\n  hosts:\n    cp1:\n      ansible_user: *nobody\n')),
      'yaml.aliases',
      /unresolved\.yaml:\d+/,
    );
    noSpecWritten();
  });

  for (const [name, pattern] of [
    ['huge-product.ini', 'cp[1:1000]-[1:1000]-[1:100]'],
    ['huge-range.ini', 'cp[1:10000000]'],
    ['slow-range.ini', 'cp[1:100000]'],
  ]) {
    it(`${pattern}: refused before expanding, at its line`, async () => {
      const started = Date.now();
      refused(
        await importOf(
          file(name as string, `# cluster\n[kube_control_plane]\n${pattern as string} ansible_user=ops\n`),
        ),
        'inventory.too-many-hosts',
        new RegExp(
          `${(name as string).replace('.', '\\.')}:3: host pattern .*expands to \\d+ hosts, more than the 1000`,
        ),
      );
      assert.ok(Date.now() - started < 5000, 'took longer than 5 s');
      noSpecWritten();
    });
  }

  it('the host limit counts every host of the file; a file over 1 MiB is refused before parsing', async () => {
    const lines = ['[kube_control_plane]', 'a[1:600]', '[kube_node]', 'b[1:600]'];
    refused(
      await importOf(file('sum.ini', `${lines.join('\n')}\n`)),
      'inventory.too-many-hosts',
      /sum\.ini:4: .*more than the 400 this inventory may still name/,
    );
    refused(
      await importOf(file('large.ini', `[kube_control_plane]\ncp1\n${'# padding\n'.repeat(120_000)}`)),
      'inventory.too-large',
      /large\.ini:1: the inventory is \d+ bytes/,
    );
    noSpecWritten();
  });

  it('a generated spec over the spec size limit blames the generated spec, not the inventory', async () => {
    const text = `[kube_control_plane]\n10.1.0.[1:3]\n[kube_node]\n10.0.[0:3].[1:249]\n[all:vars]\nansible_user=${'u'.repeat(1200)}\n`;
    refused(
      await importOf(file('wide.ini', text)),
      'inventory.spec-too-large',
      /the spec generated from wide\.ini would be \d+ bytes/,
    );
    noSpecWritten();
  });

  it('errors of the generated spec point at the inventory lines, never at "(imported spec)"', async () => {
    const dup = file(
      'dup.ini',
      '[kube_control_plane]\ncp1 ansible_host=10.0.0.1\nCP1 ansible_host=10.0.0.2\n[kube_node]\nw1 ansible_host=10.0.0.1\n',
    );
    const r = await importOf(dup);
    refused(
      r,
      'nodes.duplicate-name',
      /^error dup\.ini:3 spec\.infrastructure\.hosts\[1\]: node name "cp1" is also used by host cp1 \(dup\.ini:2\)/m,
    );
    assert.match(
      r.stderr,
      /^error dup\.ini:5 spec\.infrastructure\.hosts\[2\]\.ip: w1 has the same IP as cp1 \[nodes\.ip-duplicate\]/m,
    );
    assert.doesNotMatch(r.stderr, /imported spec/);
    noSpecWritten();
  });

  it('--name that is no DNS label: exit 2 naming --name', async () => {
    const ok = file('ok.ini', '[kube_control_plane]\ncp1 ansible_host=10.0.0.1\n');
    refused(await importOf(ok, '--name', 'Bad_Name'), 'flags.name', /--name Bad_Name: a cluster name is one DNS label/);
    noSpecWritten();
  });

  it('an ansible_host with a ";" is an invalid address at its line, not a missing one', async () => {
    const semi = file(
      'semi.ini',
      '[kube_control_plane]\ncp1 ansible_host=10.0.0.1\n[kube_node]\nw1 ansible_host="10.0.0.3;reboot"\nw2 ip=10.0.0.4x ansible_host=10.0.0.4\n',
    );
    const r = await importOf(semi);
    refused(
      r,
      'inventory.address',
      /semi\.ini:4 .*w1: ansible_host 10\.0\.0\.3;reboot is neither an IP address nor a host name/,
    );
    assert.match(r.stderr, /semi\.ini:5 .*w2: ip 10\.0\.0\.4x is not an IPv4 address \[inventory\.ip\]/);
    assert.doesNotMatch(r.stderr, /no IPv4 node address/);
  });

  it("$schema is the schema's $id, not a path of this machine", async () => {
    const ok = file('fine.ini', '[kube_control_plane]\ncp1 ansible_host=10.0.0.1\n');
    const printed = await cli(['inventory', 'import', ok]);
    assert.equal(printed.code, 0, printed.stderr);
    const written = await cli(['inventory', 'import', ok, '--out', 'fine.yaml']);
    assert.equal(written.code, 0, written.stderr);
    for (const text of [printed.stdout, readFileSync(join(tmp.dir, 'fine.yaml'), 'utf8')]) {
      const schema = /\$schema=(\S+)/.exec(text)?.[1] ?? assert.fail(text);
      assert.equal(schema, SCHEMA_ID);
      assert.ok(!isAbsolute(schema));
    }
    assert.equal(clusterJsonSchema()['$id'], SCHEMA_ID);
  });
});

describe('Kubeinit strings and --nodes', () => {
  it('--nodes with a list where one name is required: exit 2 naming --nodes[0].os', async () => {
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-1', '--nodes', '[{when_group: compute_nodes, os: ["windows"]}]']),
      'nodes.value',
      /--nodes\[0\]\.os: os must be a single name, got \["windows"\]/,
    );
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-1', '--nodes', '[{when_group: [compute_nodes]}]']),
      'nodes.value',
      /--nodes\[0\]\.when_group/,
    );
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-1', '--nodes', '[{ram: [16Gi]}]']),
      'nodes.value',
      /--nodes\[0\]\.ram/,
    );
  });

  it('limits are stated as ranges', async () => {
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-99999999999999999999']),
      'kubeinit.hypervisors',
      /hypervisors must be a whole number from 1 to 99, got "99999999999999999999"/,
    );
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-1', '--nodes', '[[when_group=compute_nodes,vcpus=0]]']),
      'nodes.value',
      /vcpus must be a whole number from 1 to 512, got "0"/,
    );
    refused(
      await cli(['validate', 'k8s-libvirt-1-1-1', '--nodes', '[{vcpus: 4.5}]']),
      'nodes.value',
      /from 1 to 512, got 4\.5/,
    );
  });
});

describe('YAML errors say their location once', () => {
  it('a duplicate key', async () => {
    const r = await cli([
      'validate',
      file('dupkey.yaml', 'apiVersion: kubemix.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: a\n  name: b\n'),
    ]);
    refused(r, 'yaml.syntax', /^error dupkey\.yaml:5:3: Map keys must be unique/m);
    assert.equal(r.stderr.split('dupkey.yaml:5:3').length - 1, 1, r.stderr);
    const json = await cli(['validate', '--json', 'dupkey.yaml']);
    const doc = JSON.parse(json.stdout) as { errors: { location: string; message: string }[] };
    assert.equal(doc.errors[0]?.location, 'dupkey.yaml:5:3');
    assert.doesNotMatch(doc.errors[0]?.message ?? '', /dupkey/);
  });
});

describe('versions: written as upstream tags them, and a patch the matrix knows', () => {
  const supported = /supported: 1\.34 \(1\.34\.0–1\.34\.9\), 1\.35 \(1\.35\.0–1\.35\.6\)/;
  const example = readFileSync(repoPath('examples', 'k8s-libvirt-1-1-1.yaml'), 'utf8');
  const cases: [string, RegExp][] = [
    ['1.36.000', /"1\.36\.000" is not a Kubernetes version as upstream writes them/],
    ['01.36', /"01\.36" is not a Kubernetes version/],
    ['1.036', /"1\.036" is not a Kubernetes version/],
    [' 1.36', /" 1\.36" is not a Kubernetes version/],
    ['1.36.', /"1\.36\." is not a Kubernetes version/],
    ['', /"" is not a Kubernetes version/],
    [
      '1.36.99',
      /Kubernetes 1\.36\.99 is not a release kubemix knows: the newest 1\.36 patch in its matrix is 1\.36\.3/,
    ],
    ['1.35.7', /Kubernetes 1\.35\.7 is not a release kubemix knows/],
  ];
  for (const [to, message] of cases) {
    it(`upgrade --to ${JSON.stringify(to)}: exit 2 naming --to and listing the supported versions`, async () => {
      file('upgrade-spec.yaml', example.replace('version: "1.36"', 'version: "1.35"'));
      const state = join(tmp.dir, `state-to-${cases.findIndex(([t]) => t === to)}`);
      const r = await cli(['upgrade', 'upgrade-spec.yaml', '--to', to, '--check', '--state-dir', state]);
      refused(r, 'flags.to', new RegExp(`--to: ${message.source}`));
      assert.match(r.stderr, supported);
    });
  }
});

describe("Kubeinit --hypervisors: the Ansible connection variables are the hypervisor's SSH settings", () => {
  const forms: [string, string][] = [
    ['bracket', '[[ansible_host=nyctea,ansible_user=kube,ansible_ssh_private_key_file=~/.ssh/hv,ansible_port=2222]]'],
    [
      'JSON',
      '[{"host": "hv-a", "ansible_host": "nyctea", "ansible_ssh_user": "kube", "ansible_private_key_file": "~/.ssh/hv", "ansible_ssh_port": 2222}]',
    ],
    [
      'YAML',
      '[{ansible_host: nyctea, ansible_user: kube, ansible_ssh_private_key_file: ~/.ssh/hv, ansible_port: "2222"}]',
    ],
  ];
  for (const [form, list] of forms) {
    it(`${form}: user, identity file and port reach spec.infrastructure.hypervisors`, async () => {
      const r = await cli(['init', 'k8s-libvirt-1-1-1', '--hypervisors', list]);
      assert.equal(r.code, 0, r.stderr);
      const doc = YAML.parse(r.stdout) as { spec: { infrastructure: { hypervisors: Record<string, unknown>[] } } };
      const [hv] = doc.spec.infrastructure.hypervisors;
      assert.deepEqual(
        { ...hv },
        {
          name: form === 'JSON' ? 'hv-a' : 'hypervisor-01',
          address: 'nyctea',
          user: 'kube',
          identityFile: '~/.ssh/hv',
          port: 2222,
        },
      );
    });
  }
});
