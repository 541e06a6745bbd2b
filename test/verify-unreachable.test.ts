// `kubemix verify` when the nodes cannot be reached over SSH (loopback
// addresses whose SSH port nothing listens on), run as a user runs it: the
// process must end with its report and a documented exit code. With layer 2
// on (--kubeconfig or --installed) more probes per node are in flight than
// the transport opens sessions for, and the queued ones waited forever: Node
// exited 13 ("unsettled top-level await") with no output at all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasStackTrace, repoPath } from './helpers/cli.js';
import { makePki } from './helpers/pki.js';
import { SecretStore } from '../src/exec/secrets.js';
import { statePaths } from '../src/exec/state-dir.js';
import { SECRET_NAMES } from '../src/model/secret-names.js';

/** A port on `address` nothing listens on (bound, then closed). */
async function closedPort(address: string): Promise<number> {
  const server = createServer();
  server.listen(0, address);
  await once(server, 'listening');
  const bound = server.address();
  assert.ok(bound !== null && typeof bound === 'object');
  server.close();
  await once(server, 'close');
  return bound.port;
}

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function kubemix(args: readonly string[]): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [repoPath('bin', 'kubemix.js'), ...args],
      { timeout: 90_000, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: tmpdir() } },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    );
  });
}

describe('kubemix verify with every node unreachable over SSH', { timeout: 180_000 }, () => {
  let dir: string;
  let spec: string;
  let kubeconfig: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubemix-verify-unreachable-'));
    const hosts = [
      ['host-1', '127.0.0.2', 'control-plane'],
      ['host-2', '127.0.0.3', 'worker'],
      ['host-3', '127.0.0.4', 'services'],
    ];
    const lines: string[] = [];
    for (const [name, address, role] of hosts)
      lines.push(
        `      - { name: ${name}, address: ${address}, port: ${await closedPort(address!)}, roles: [${role}], os: debian-13, user: root }`,
      );
    spec = join(dir, 'vu.yaml');
    writeFileSync(
      spec,
      [
        'apiVersion: kubemix.dev/v1alpha1',
        'kind: Cluster',
        'metadata: { name: vu }',
        'spec:',
        '  domain: verify.test',
        '  network: { nodeCidr: 127.0.0.0/28 }',
        '  infrastructure:',
        '    driver: existing',
        '    hosts:',
        ...lines,
        '',
      ].join('\n'),
    );
    // The API server's port is closed too: the CA only has to be one.
    const ca = Buffer.from(makePki(dir).caCert).toString('base64');
    const text = [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: c, cluster: { server: "https://127.0.0.1:${await closedPort('127.0.0.1')}", certificate-authority-data: ${ca} } }]`,
      'users: [{ name: u, user: { token: t0ken } }]',
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
      '',
    ].join('\n');
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, text);
    // --installed reads the admin kubeconfig `kubemix up` captured into the state directory.
    mkdirSync(join(dir, 'state'), { mode: 0o700 });
    const store = await SecretStore.open(statePaths(join(dir, 'state')).secrets);
    await store.set(SECRET_NAMES.adminKubeconfig, { value: text, source: 'captured' });
    writeFileSync(join(dir, 'known_hosts'), '');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const args = (...more: string[]): string[] => [
    'verify',
    spec,
    '--state-dir',
    join(dir, 'state'),
    '--known-hosts',
    join(dir, 'known_hosts'),
    ...more,
  ];

  for (const flags of [['--kubeconfig'], ['--installed']]) {
    it(`${flags[0]}: ends with the matrix, the failures and exit 1 (not 13, not silent)`, async () => {
      const r = await kubemix(args(...(flags[0] === '--kubeconfig' ? ['--kubeconfig', kubeconfig] : flags)));
      assert.equal(r.code, 1, `exit ${String(r.code)}\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /^0 checks passed, \d+ failed, \d+ skipped$/m);
      assert.match(r.stderr, /verify checks failed \[findings\]/);
      assert.ok(!hasStackTrace(r.stdout + r.stderr));
      // Layer 1: one failure per node saying it cannot be reached, and what to do; no cell blames UDP 4789.
      for (const node of ['host-1', 'host-2', 'host-3'])
        assert.equal(
          r.stdout.split(`cannot reach node ${node} over SSH: `).length - 1,
          1,
          `one failure for ${node}\n${r.stdout}`,
        );
      assert.doesNotMatch(r.stdout, /rejected on the path|firewall drops UDP/);
      assert.match(r.stdout, /–\d skipped: cannot reach host-2 over SSH \(see underlay ssh deployer → host-2\)/);
    });
  }
});
