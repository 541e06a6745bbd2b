// `kubemix verify SPEC` in process against sshd test hosts: the matrix, the
// summary line, --json, --junit (validated by xmllint against the JUnit XSD
// Jenkins uses), --only/--skip and the exit codes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { TestNet, harnessAvailable, quiet, sh, type TestHost } from './harness/netns.js';
import { repoPath } from './helpers/cli.js';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';

const skip = harnessAvailable();

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: {},
    cwd: process.cwd(),
    isTty: false,
    signal: new AbortController().signal,
  };
}

function validJunit(file: string): void {
  execFileSync('xmllint', ['--noout', '--schema', repoPath('test', 'fixtures', 'junit-10.xsd'), file], {
    stdio: 'pipe',
  });
}

describe('kubemix verify (CLI)', () => {
  it('--help describes the cells and the probes', async () => {
    const c = io();
    await run(['verify', '--help'], c);
    const help = c.out.join('');
    for (const text of [
      '✓ passed, ✗ failed, –N skipped',
      'udp-(\\d+)',
      "don't-fragment",
      '--junit <file>',
      '--only <regex>',
    ])
      assert.ok(help.includes(text), `help mentions ${text}`);
  });

  it('a bad --only is exit 2 naming the flag, before any host is touched', async () => {
    const c = io();
    assert.equal(await run(['verify', 'k8s-libvirt-1-1-1', '--only', '(['], c), 2);
    assert.match(c.err.join(''), /--only "\(\[" is not a regular expression/);
  });

  it('a --skip over 1000 characters or with lookahead is exit 2 naming the flag and the limit', async () => {
    const long = io();
    assert.equal(await run(['verify', 'k8s-libvirt-1-1-1', '--skip', '(a+)+'.repeat(201)], long), 2);
    assert.match(long.err.join(''), /--skip is 1005 characters long; the limit is 1000/);
    const ahead = io();
    assert.equal(await run(['verify', 'k8s-libvirt-1-1-1', '--skip', '(?=udp)'], ahead), 2);
    assert.match(ahead.err.join(''), /--skip "\(\?=udp\)" is not a regular expression/);
  });
});

describe('kubemix verify against sshd test hosts', { skip, timeout: 180_000 }, () => {
  let net: TestNet;
  let spec: string;
  let state: string;
  before(async () => {
    net = await TestNet.create(3, { privateHosts: true });
    const [cp, w, s] = net.hosts as [TestHost, TestHost, TestHost];
    writeFileSync(net.hostsFile, `127.0.0.1 localhost\n${s.address} api.vt.verify.test registry.vt.verify.test\n`);
    state = join(net.root, 'state');
    writeFileSync(join(net.root, 'known_hosts'), `${net.hosts.map((h) => net.knownHostsLine(h)).join('\n')}\n`);
    const host = (h: TestHost, role: string): string =>
      `    - { name: ${h.name}, address: ${h.address}, roles: [${role}], os: debian-13, user: root, identityFile: ${net.clientKey} }`;
    spec = join(net.root, 'vt.yaml');
    writeFileSync(
      spec,
      [
        'apiVersion: kubemix.dev/v1alpha1',
        'kind: Cluster',
        'metadata: { name: vt }',
        'spec:',
        '  domain: verify.test',
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

  const args = (...more: string[]): string[] => [
    'verify',
    spec,
    '--state-dir',
    state,
    '--known-hosts',
    join(net.root, 'known_hosts'),
    ...more,
  ];

  it('prints the matrix with every cell ✓ or skipped, the summary, exit 0; --junit validates', async () => {
    const c = io();
    const junit = join(net.root, 'ok.xml');
    const code = await run(args('--junit', junit), c);
    const text = c.out.join('');
    assert.equal(code, 0, text + c.err.join(''));
    assert.match(
      text,
      /underlay: VXLAN port: a datagram to a listener on the target, UDP 4789\n {2}\s+host-1\s+host-2\s+host-3\n {2}host-1\s+·\s+✓\s+✓/,
    );
    assert.match(text, /–1 skipped: before install: nothing listens yet/);
    assert.doesNotMatch(text, /✗/);
    assert.match(text, /^\d+ checks passed, 0 failed, \d+ skipped$/m);
    validJunit(junit);
    assert.match(
      readFileSync(junit, 'utf8'),
      /<testcase classname="underlay.udp-4789" name="host-1 → host-2" time="0"\/>/,
    );
  });

  it('with UDP 4789 dropped on one host: exactly its cells fail, named, exit 1; --json and --junit agree', async () => {
    const h = net.hosts[1]!;
    sh('ip', ['netns', 'exec', h.ns, 'nft', 'add table inet kmverify']);
    try {
      sh('ip', ['netns', 'exec', h.ns, 'nft', 'add chain inet kmverify in { type filter hook input priority 0 ; }']);
      sh('ip', ['netns', 'exec', h.ns, 'nft', 'add rule inet kmverify in udp dport 4789 drop']);
      const c = io();
      assert.equal(await run(args('--only', '/udp-'), c), 1);
      const text = c.out.join('');
      assert.match(text, /✗ underlay udp-4789 host-1 → host-2: no datagram arrived at host-2/);
      assert.match(text, /command: python3: send 'kubemix-verify:host-1' to 198\.51\.100\.\d+:4789\/udp x10/);
      assert.match(text, /likely cause: a firewall drops UDP 4789/);
      assert.match(text, /^4 checks passed, 2 failed, 0 skipped$/m);
      const j = io();
      const junit = join(net.root, 'bad.xml');
      assert.equal(await run(['--json', ...args('--only', '/udp-', '--skip', 'host-3', '--junit', junit)], j), 1);
      const doc = JSON.parse(j.out.join('')) as {
        ok: boolean;
        summary: unknown;
        checks: { id: string; status: string }[];
      };
      assert.equal(doc.ok, false);
      assert.deepEqual(doc.summary, { passed: 1, failed: 1, skipped: 0 });
      assert.deepEqual(
        doc.checks.filter((x) => x.status === 'fail').map((x) => x.id),
        ['underlay/udp-4789/host-1/host-2'],
      );
      validJunit(junit);
      assert.match(
        readFileSync(junit, 'utf8'),
        /<failure message="no datagram arrived at host-2 in 10 tries" type="udp-4789">/,
      );
    } finally {
      quiet('ip', ['netns', 'exec', h.ns, 'nft', 'delete table inet kmverify']);
    }
  });

  it('Ctrl-C: exit 130, no matrix and no JUnit file that would read as a verdict', async () => {
    const c = io();
    const stop = new AbortController();
    stop.abort();
    const junit = join(net.root, 'aborted.xml');
    assert.equal(await run(args('--junit', junit), { ...c, signal: stop.signal }), 130);
    assert.doesNotMatch(c.out.join(''), /checks passed/);
    assert.throws(() => readFileSync(junit));
  });

  it('task-run-validations carries the underlay check: it names the failing pair (MTU lowered on one link)', async () => {
    const model = resolveModel(readSpec({ kind: 'file', path: spec, text: readFileSync(spec, 'utf8') }));
    const tasks = assemblePlan(model).plan.tasks.filter(
      (t) => t.stage === 'task-run-validations' && t.name === 'underlay',
    );
    assert.deepEqual(
      tasks.map((t) => t.host),
      ['host-1', 'host-2', 'host-3'],
    );
    const h = net.hosts[2]!;
    const knownHosts = await new KnownHostsFile(join(net.root, 'known_hosts')).load();
    const t = new SshTransport(net.connection(net.hosts[0]!), {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts,
      trustNewHosts: false,
      maxSessions: 2,
    });
    try {
      const task = tasks[0]!;
      const healthy = await t.exec({ shell: 'sh', privilege: 'root', script: task.apply.script });
      assert.equal(healthy.code, 0, healthy.stderr);
      sh('ip', ['-n', h.ns, 'link', 'set', 'eth0', 'mtu', '1400']);
      const r = await t.exec({ shell: 'sh', privilege: 'root', script: task.apply.script });
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(`underlay mtu-1500 host-1 → host-3 \\(${h.address.replace(/\./g, '\\.')}\\): don't-fragment`),
      );
      assert.doesNotMatch(r.stderr, /host-1 → host-2/);
    } finally {
      sh('ip', ['-n', h.ns, 'link', 'set', 'eth0', 'mtu', '1500']);
      await t.close();
    }
  });
});
