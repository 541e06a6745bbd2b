// `kubemix down`: confirmation rules, the reset plan's order, and a real
// `down --check` through the executor on test hosts (checks only: the test
// hosts share this machine's file system, so the resets themselves are not run).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { run } from '../src/cli/main.js';
import { resolveModel } from '../src/model/resolve.js';
import { assembleResetPlan } from '../src/plan/reset.js';
import { readSpec } from '../src/spec/read.js';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { writeKnownHosts } from './harness/fixture.js';
import { captureIo, repoPath, runCli } from './helpers/cli.js';

describe('kubemix down: confirmation', () => {
  it('without a terminal and without --yes it refuses (exit 2) and changes nothing', async () => {
    const r = await runCli(['down', 'k8s-libvirt-1-1-1']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /pass --yes \[down\.confirm\]/);
  });
  it('on a terminal it wants the cluster name typed', async () => {
    const io = { ...captureIo(), ask: () => Promise.resolve('no') };
    assert.equal(await run(['down', 'k8s-libvirt-1-1-1'], io), 2);
    assert.match(io.err(), /not confirmed/);
  });
});

describe('the reset plan', () => {
  const planOf = (example: string) => {
    const text = readFileSync(repoPath('examples', `${example}.yaml`), 'utf8');
    return assembleResetPlan(resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }))).plan;
  };

  it('resets Windows and Linux workers before the controllers, deleting Windows Node objects first', () => {
    const plan = planOf('existing-host-gw');
    const byId = new Map(plan.tasks.map((t) => [t.id, t]));
    const cp = byId.get('task-cleanup-hypervisors/cp1/node-reset');
    assert.deepEqual([...(cp?.after ?? [])].sort(), [
      'task-cleanup-hypervisors/cp1/delete-node-win1',
      'task-cleanup-hypervisors/lin1/node-reset',
    ]);
    assert.deepEqual(byId.get('task-cleanup-hypervisors/cp1/delete-node-win1')?.after, [
      'task-cleanup-hypervisors/win1/win-reset',
    ]);
    assert.ok(byId.has('task-cleanup-hypervisors/svc1/services-reset'));
    assert.ok(plan.artifacts.some((a) => a.node === 'win1' && a.remotePath.endsWith('reset.ps1')));
  });

  it('removes the VMs kubemix created instead of resetting them', () => {
    const plan = planOf('k8s-libvirt-3-2-1');
    assert.deepEqual(
      plan.tasks.map((t) => t.id),
      ['task-cleanup-hypervisors/hypervisor-01/remove-cluster'],
    );
    assert.deepEqual(plan.artifacts, []);
  });
});

const skip = harnessAvailable();

describe('kubemix down --check on test hosts', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  let specFile: string;
  before(async () => {
    net = await TestNet.create(2);
    specFile = join(net.root, 'cluster.yaml');
    writeFileSync(
      specFile,
      stringify({
        apiVersion: 'kubemix.dev/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'lab' },
        spec: {
          network: { nodeCidr: '198.51.100.0/24' },
          infrastructure: {
            driver: 'existing',
            hosts: net.hosts.map((h, i) => ({
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
  });
  after(async () => net?.cleanup());

  it('runs every reset check through the executor; hosts without a cluster need no change', async () => {
    const r = await runCli(['down', specFile, '--check', '--known-hosts', writeKnownHosts(net)], {
      env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /no changes/);
  });
});
