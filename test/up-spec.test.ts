// `kubemix up SPEC` end to end on real sshd test hosts: the spec is planned in
// memory and its fact-gathering and validation tasks really run.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { writeKnownHosts } from './harness/fixture.js';
import { hasStackTrace, runCli } from './helpers/cli.js';

const skip = harnessAvailable();

/** This machine's own OS id (the test hosts share its root file system). */
function localOs(): string {
  const release = readFileSync('/etc/os-release', 'utf8');
  const field = (name: string): string =>
    /^(\w+)=(.*)$/m.exec(release.split('\n').find((l) => l.startsWith(`${name}=`)) ?? '')?.[2]?.replace(/"/g, '') ?? '';
  return `${field('ID')}-${field('VERSION_ID')}`;
}

describe('kubemix up SPEC on test hosts', { skip, timeout: 90_000 }, () => {
  let net: TestNet;
  let specFile: string;
  let knownHosts: string;
  const spec = (os: string, version = '1.36'): string =>
    stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'lab' },
      spec: {
        kubernetes: { version },
        network: { nodeCidr: '198.51.100.0/24' },
        infrastructure: {
          driver: 'existing',
          hosts: net.hosts.map((h, i) => ({
            name: h.name,
            address: h.address,
            roles: [i === 0 ? 'control-plane' : 'worker'],
            os,
            identityFile: net.clientKey,
          })),
        },
        services: { enabled: false },
      },
    });

  before(async () => {
    // The underlay validation resolves the API name (no services DNS here): the hosts get their own /etc/hosts.
    net = await TestNet.create(2, { privateHosts: true });
    writeFileSync(net.hostsFile, `127.0.0.1 localhost\n${net.hosts[0]!.address} api.lab.kubeinit.local\n`);
    knownHosts = writeKnownHosts(net);
    specFile = join(net.root, 'cluster.yaml');
    writeFileSync(specFile, spec(localOs()));
  });
  after(async () => net?.cleanup());

  it('gathers facts and validates every host, keeping state in .kubemix/<cluster> beside the spec', async () => {
    const r = await runCli(['up', specFile, '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
    assert.equal(r.code, 0, r.stderr);
    const state = join(net.root, '.kubemix', 'lab');
    assert.equal(statSync(state).mode & 0o777, 0o700);
    for (const h of net.hosts) {
      const facts = readdirSync(join(state, 'facts', h.name))
        .map((f) => readFileSync(join(state, 'facts', h.name, f), 'utf8'))
        .join('\n');
      assert.match(facts, /cpus=\d+/, `facts of ${h.name}`);
      assert.match(facts, /ramMiB=\d+/);
    }
    const status = await runCli(['status', specFile]);
    assert.equal(status.code, 1, 'incomplete: the deploy stages have not run');
    // facts, os-and-size and the underlay check (ping, MTU to the other host) are done.
    assert.match(status.stdout, /host-1\s+3\s+\d+\s+0\s+task-prepare-cluster\/host-1\//);
    const json = await runCli(['status', '--json', specFile]);
    assert.equal(json.code, 1);
    const doc = JSON.parse(json.stdout) as { ok: boolean; hosts: { host: string; done: number }[] };
    assert.equal(doc.ok, false);
    assert.deepEqual(
      doc.hosts.map((h) => [h.host, h.done]),
      [
        ['host-1', 3],
        ['host-2', 3],
      ],
    );
    const logs = await runCli(['logs', specFile, 'host-2']);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /task-run-validations\/host-2\/os-and-size/);
    assert.match(logs.stdout, /task-run-validations\/host-2\/underlay/);
  });

  it('up SPEC --plan DIR applies a matching plan and refuses a stale one (exit 2)', async () => {
    const dir = join(net.root, 'plan');
    const planned = await runCli(['plan', specFile, '--out', dir]);
    assert.equal(planned.code, 0, planned.stderr);
    const same = await runCli(
      ['up', specFile, '--plan', dir, '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'],
      { env: { KUBEMIX_RETRY_ATTEMPTS: '1' } },
    );
    assert.equal(same.code, 0, same.stderr);
    writeFileSync(specFile, spec(localOs(), '1.35'));
    const stale = await runCli(['up', specFile, '--plan', dir, '--known-hosts', knownHosts]);
    assert.equal(stale.code, 2);
    assert.match(stale.stderr, /no longer produces the plan .*\[plan\.stale\]/);
    writeFileSync(specFile, spec(localOs()));
  });

  it('a host that runs another OS than the spec says fails its validation: exit 3 naming host and task', async () => {
    const wrong = join(net.root, 'wrong.yaml');
    writeFileSync(wrong, spec(localOs() === 'ubuntu-24.04' ? 'debian-13' : 'ubuntu-24.04'));
    const r = await runCli(['up', wrong, '--known-hosts', knownHosts, '--state-dir', join(net.root, 'wrong-state')], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /task-run-validations\/host-1\/os-and-size/);
    assert.match(r.stderr, /the spec says (ubuntu-24\.04|debian-13)/);
    assert.equal(hasStackTrace(r.stderr), false);
    assert.equal(existsSync(join(net.root, 'wrong-state', 'journal.json')), true, 'the journal is kept for a resume');
  });
});
