// `kubemix add-node` on real sshd test hosts: after a first deployment of one
// node, a second node added to the spec is deployed without the first
// node's finished tasks running again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { writeKnownHosts } from './harness/fixture.js';
import { runCli } from './helpers/cli.js';

const skip = harnessAvailable();
const ENV = { KUBEMIX_RETRY_ATTEMPTS: '1' };

describe('kubemix add-node on test hosts', { skip, timeout: 90_000 }, () => {
  let net: TestNet;
  let knownHosts: string;
  const specFile = (): string => join(net.root, 'cluster.yaml');
  const writeSpec = (count: number, first = 0): void => {
    writeFileSync(
      specFile(),
      stringify({
        apiVersion: 'kubemix.dev/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'lab' },
        spec: {
          network: { nodeCidr: '198.51.100.0/24' },
          infrastructure: {
            driver: 'existing',
            hosts: net.hosts.slice(first, first + count).map((h, i) => ({
              name: h.name,
              address: h.address,
              roles: [i === 0 ? 'control-plane' : 'worker'],
              os: 'debian-12',
              identityFile: net.clientKey,
            })),
          },
          services: { enabled: false },
        },
      }),
    );
  };

  before(async () => {
    net = await TestNet.create(2);
    knownHosts = writeKnownHosts(net);
  });
  after(async () => net?.cleanup());

  it('refuses before any deployment', async () => {
    writeSpec(1);
    const r = await runCli(['add-node', specFile(), '--known-hosts', knownHosts]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /add-node\.never-deployed/);
  });

  it("runs only the new node's tasks; a dropped node is refused", async () => {
    writeSpec(1);
    const first = await runCli(
      ['up', specFile(), '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'],
      { env: ENV },
    );
    assert.equal(first.code, 0, first.stderr);
    writeSpec(2);
    const added = await runCli(
      ['--json', 'add-node', specFile(), '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'],
      { env: ENV },
    );
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /new: host-2/);
    const events = added.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; host?: string; state?: string });
    const final = (host: string): string[] =>
      events.filter((e) => e.type === 'task' && e.host === host && e.state !== 'running').map((e) => e.state ?? '');
    // host-1's facts and preflight are skipped; its underlay check runs again: it now has a new peer.
    assert.deepEqual(
      final('host-1').sort(),
      ['done', 'skipped', 'skipped'],
      'host-1 is already done but for its peers',
    );
    assert.deepEqual(final('host-2'), ['done', 'done', 'done']);
    writeSpec(1, 1);
    const dropped = await runCli(['add-node', specFile(), '--known-hosts', knownHosts], { env: ENV });
    assert.equal(dropped.code, 2);
    assert.match(dropped.stderr, /no longer has host-1, .*\[add-node\.removed\]/);
  });
});
