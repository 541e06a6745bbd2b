// `kubemix diagnose` in process against sshd test hosts (a control plane, a
// worker and the services node of an `existing` cluster): the real executor
// over SSH, the real collection scripts, the bundle written as a gzip
// tarball (0600) that GNU tar lists and extracts, every node's section in
// it — the services node's state (service states, `haproxy -c`,
// `named-checkconf -z`, logs, listeners) included — a secret of the state
// directory's store planted in what the nodes print and redacted in the
// archive, and --json agreeing with findings.json. The test hosts share this
// machine's filesystem, so what the services node reports is this machine's
// HAProxy and Bind configuration (there is no systemd here: the service
// states say so).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../src/cli/main.js';
import { collectScript, splitSections } from '../src/diagnose/sections.js';
import { TestNet, harnessAvailable, type TestHost } from './harness/netns.js';
import { captureIo } from './helpers/cli.js';
import { fakeSecret, seedSecrets } from './trace/fake-secrets.js';
import { shell } from '../src/util/escape/index.js';

const skip = harnessAvailable();

describe('kubemix diagnose against sshd test hosts', { skip, timeout: 240_000 }, () => {
  let net: TestNet;
  let spec: string;
  let state: string;
  const secret = fakeSecret('registry-password');
  before(async () => {
    net = await TestNet.create(3, { privateHosts: true });
    const [cp, w, s] = net.hosts as [TestHost, TestHost, TestHost];
    // Every host's sessions see this private resolv.conf: a planted secret reaches the collected `dns` section.
    writeFileSync(
      join(net.root, 'private-etc', 'resolv.conf'),
      `nameserver 127.0.0.1\n# left by an operator: ${secret}\noptions timeout:1 attempts:1\n`,
    );
    state = join(net.root, 'state');
    await seedSecrets(state, ['registry-password'], new Set());
    writeFileSync(join(state, 'known_hosts'), `${net.hosts.map((h) => net.knownHostsLine(h)).join('\n')}\n`);
    const host = (h: TestHost, role: string): string =>
      `    - { name: ${h.name}, address: ${h.address}, roles: [${role}], os: debian-13, user: root, identityFile: ${net.clientKey} }`;
    spec = join(net.root, 'dg.yaml');
    writeFileSync(
      spec,
      [
        'apiVersion: kubemix.dev/v1alpha1',
        'kind: Cluster',
        'metadata: { name: dg }',
        'spec:',
        '  domain: diag.test',
        `  network: { nodeCidr: 198.51.100.${net.block * 16}/28 }`,
        '  infrastructure:',
        '    driver: existing',
        '    hosts:',
        host(cp, 'control-plane'),
        host(w, 'worker'),
        host(s, 'services'),
        '',
      ].join('\n'),
    );
  });
  after(async () => net?.cleanup());

  it('--out FILE.tar.gz --json: a 0600 tarball GNU tar reads, every node in it, the secret redacted', async () => {
    const archive = join(net.root, 'dg-diag.tar.gz');
    const c = captureIo({ cwd: net.root });
    const code = await run(['--json', 'diagnose', spec, '--state-dir', state, '--out', archive], c);
    const stderr = c.err();
    assert.ok(code === 0 || code === 1, `exit ${code}: ${stderr}`);
    assert.equal(statSync(archive).mode & 0o777, 0o600);
    const listing = execFileSync('tar', ['-tzvf', archive], { encoding: 'utf8' });
    for (const line of listing.trim().split('\n')) assert.match(line, /^(-rw-------|drwx------) /, line);
    const out = join(net.root, 'extracted');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', archive, '-C', out]);
    const top = join(out, 'dg-diag');
    assert.deepEqual(readdirSync(top).sort(), ['findings.json', 'findings.txt', 'host-1', 'host-2', 'host-3']);
    const files = (node: string) => readdirSync(join(top, node)).sort();
    for (const n of ['host-1', 'host-2']) assert.ok(files(n).includes('dns.txt') && files(n).includes('routes.txt'));
    assert.ok(files('host-1').includes('cluster-nodes.txt'), 'the first control plane has the cluster sections');
    for (const f of ['service-states.txt', 'haproxy-check.txt', 'named-check.txt', 'haproxy-log.txt', 'listening.txt'])
      assert.ok(files('host-3').includes(f), `services node lacks ${f}: ${files('host-3').join(' ')}`);
    assert.match(readFileSync(join(top, 'host-3', 'named-check.txt'), 'utf8'), /exit \d+\s*$/);
    assert.match(readFileSync(join(top, 'host-3', 'haproxy-check.txt'), 'utf8'), /exit \d+\s*$/);
    const dns = readFileSync(join(top, 'host-2', 'dns.txt'), 'utf8');
    assert.match(dns, /# left by an operator: <redacted:registry-password>/);
    const everything = execFileSync('sh', ['-c', `cat "$1"/*/* "$1"/*.json`, 'sh', top], { encoding: 'utf8' });
    assert.ok(!everything.includes(secret), 'a secret value reached the archive');
    // --json on stdout is the archive's findings.json, with the bundle path.
    const json = JSON.parse(c.out()) as { bundle: string; findings: unknown[]; failed: string[] };
    const inside = JSON.parse(readFileSync(join(top, 'findings.json'), 'utf8')) as { findings: unknown[] };
    assert.equal(json.bundle, archive);
    assert.deepEqual(json.findings, inside.findings);
    assert.deepEqual(json.failed, []);
    assert.equal(code, json.findings.length > 0 ? 1 : 0);
    // The executor's own logs of the run held the raw output: gone.
    assert.throws(() => statSync(join(state, 'diagnose', 'logs')));
  });

  it('an existing archive is refused (exit 2), untouched', async () => {
    const archive = join(net.root, 'taken.tar.gz');
    writeFileSync(archive, 'mine');
    const c = captureIo({ cwd: net.root });
    assert.equal(await run(['diagnose', spec, '--state-dir', state, '--out', archive], c), 2);
    assert.match(c.err(), /exists; the bundle goes into a new file/);
    assert.equal(readFileSync(archive, 'utf8'), 'mine');
  });
});

describe('diagnose sections are bounded in time', () => {
  it('a hanging section is cut after its timeout and the next section still runs', () => {
    const script = collectScript(
      'sh',
      [
        { name: 'hangs', command: shell`sleep 60` },
        { name: 'after', command: shell`echo still here` },
      ],
      1,
    );
    const started = Date.now();
    const text = execFileSync('sh', ['-c', script], { encoding: 'utf8', timeout: 20_000 });
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.equal(splitSections(text).get('after'), 'still here');
  });
});
