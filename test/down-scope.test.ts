// `down` on existing hosts resets only the hosts kubemix deployed (issue #31:
// it reset hosts the journal never deployed). The plan for a scope, and the
// command's rule: the deploy journal decides; without one, a loud warning and
// the typed confirmation on a terminal, or exit 2 naming --all-hosts without.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { run } from '../src/cli/main.js';
import { resolveModel } from '../src/model/resolve.js';
import { assembleResetPlan } from '../src/plan/reset.js';
import { readSpec } from '../src/spec/read.js';
import { captureIo, repoPath, runCli } from './helpers/cli.js';

const STAGE = 'task-cleanup-hypervisors';

describe('the reset plan for a scope of hosts', () => {
  const text = readFileSync(repoPath('examples', 'existing-host-gw.yaml'), 'utf8');
  const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }));
  const planFor = (hosts: string[]) => assembleResetPlan(model, (h) => hosts.includes(h)).plan;

  it('holds tasks on the hosts in scope only, with no wait on a task it left out', () => {
    const plan = planFor(['cp1', 'svc1']);
    assert.deepEqual(plan.tasks.map((t) => t.id).sort(), [`${STAGE}/cp1/node-reset`, `${STAGE}/svc1/services-reset`]);
    assert.deepEqual(plan.tasks.find((t) => t.host === 'cp1')?.after, []);
    assert.deepEqual(plan.artifacts, [], "win1's reset script is not uploaded");
  });

  it('deletes a Windows Node object only through a controller it resets', () => {
    const ids = planFor(['win1', 'lin1']).tasks.map((t) => t.id);
    assert.deepEqual(ids.sort(), [`${STAGE}/lin1/node-reset`, `${STAGE}/win1/win-reset`]);
  });

  it('every host by default', () => {
    const hosts = new Set(assembleResetPlan(model).plan.tasks.map((t) => t.host));
    assert.deepEqual([...hosts].sort(), ['cp1', 'lin1', 'svc1', 'win1']);
  });
});

describe('kubemix down: which existing hosts it resets', () => {
  let dir: string;
  let spec: string;
  let state: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'down-scope-'));
    spec = join(dir, 'cluster.yaml');
    state = join(dir, 'state');
    mkdirSync(state, { mode: 0o700 });
    // Port 1 on loopback refuses at once: a run that reaches a host fails there, naming it.
    const host = (name: string, role: string, address: string) => ({
      name,
      address,
      port: 1,
      roles: [role],
      os: 'debian-12',
      identityFile: join(dir, 'id'),
    });
    writeFileSync(
      spec,
      stringify({
        apiVersion: 'kubemix.dev/v1alpha1',
        kind: 'Cluster',
        metadata: { name: 'lab' },
        spec: {
          network: { nodeCidr: '127.0.0.0/24' },
          infrastructure: {
            driver: 'existing',
            hosts: [
              host('cp1', 'control-plane', '127.0.0.11'),
              host('w1', 'worker', '127.0.0.12'),
              host('w2', 'worker', '127.0.0.13'),
            ],
          },
          services: { enabled: false },
        },
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('no journal, no terminal: exit 2 naming --all-hosts, even with --yes; nothing is run', async () => {
    const r = await runCli(['down', spec, '--yes', '--state-dir', state]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /cannot tell which hosts of lab it deployed/);
    assert.match(r.stderr, /--all-hosts/);
    assert.match(r.stderr, /\[down\.no-journal\]/);
    assert.equal(existsSync(join(state, 'down')), false, 'no reset journal: nothing ran');
  });

  it('no journal, on a terminal: the warning names every host, then the cluster name is asked', async () => {
    const said: string[] = [];
    const base = captureIo();
    const io = {
      ...base,
      stderr: (t: string) => void said.push(`stderr:${t}`),
      ask: (q: string) => (said.push(`ask:${q}`), Promise.resolve('not-lab')),
    };
    assert.equal(await run(['down', spec, '--state-dir', state], io), 2);
    const warning = said.findIndex((s) => /WARNING: no deploy journal .*cp1, w1, w2/.test(s));
    const asked = said.findIndex((s) => s.startsWith('ask:'));
    assert.ok(warning >= 0 && asked > warning, said.join('\n'));
    assert.match(said.join(''), /not confirmed/);
  });

  it('a journal with some hosts: only those are reset, the others named with --all-hosts', async () => {
    const done = { state: 'done', inputHash: 'x', attempts: 1 };
    writeFileSync(
      join(state, 'journal.json'),
      JSON.stringify({
        version: 1,
        cluster: 'lab',
        planHash: 'x',
        updatedAt: '2026-01-01T00:00:00.000Z',
        tasks: {
          'task-prepare-hosts/cp1/swap-off': { ...done, host: 'cp1' },
          'task-prepare-hosts/w1/swap-off': { ...done, host: 'w1' },
          'task-prepare-hosts/w2/swap-off': { ...done, state: 'failed', host: 'w2' },
        },
      }),
      { mode: 0o600 },
    );
    const hosts = async (...flags: string[]) => {
      const r = await runCli(['--json', 'down', spec, '--yes', '--state-dir', state, ...flags], {
        env: { KUBEMIX_RETRY_ATTEMPTS: '1' },
      });
      // The run fails on the first host it reaches (no identity file): which hosts it planned is what counts.
      const start = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{"t"'))
        .map((l) => JSON.parse(l) as { type: string; hosts?: string[] })
        .find((e) => e.type === 'run:start');
      return { hosts: start?.hosts ?? [], stderr: r.stderr };
    };
    const scoped = await hosts();
    assert.deepEqual(scoped.hosts, ['cp1', 'w1']);
    assert.match(scoped.stderr, /WARNING: the deploy journal .* has no task done on w2: kubemix did not deploy it/);
    assert.match(scoped.stderr, /Pass --all-hosts to reset it too/);
    const all = await hosts('--all-hosts');
    assert.deepEqual(all.hosts, ['cp1', 'w1', 'w2']);
    assert.doesNotMatch(all.stderr, /WARNING/);
    // --only keeps working inside the scope, and says so when it names a host outside it.
    assert.deepEqual((await hosts('--only', 'w1')).hosts, ['w1']);
    const outside = await runCli(['down', spec, '--yes', '--state-dir', state, '--only', 'w2']);
    assert.equal(outside.code, 2);
    assert.match(outside.stderr, /--only w2: the deploy journal has no task done on w2.*\[down\.not-deployed\]/);
    assert.match(outside.stderr, /add --all-hosts/);
    assert.deepEqual((await hosts('--only', 'w2', '--all-hosts')).hosts, ['w2']);
  });
});
