// kill -9 of an upgrade mid-roll, then the same upgrade again: it resumes
// with the node that was in progress, never applies again a task the journal
// had done, never touches a node that was through (uncordoned), and ends
// with every task done. The upgrade plan of examples/k8s-libvirt-3-2-1.yaml
// runs in a child process (test/helpers/upgrade-child.ts: the real executor
// against the recording target, since no kubeadm or Windows host exists
// here), killed with SIGKILL at a random point of its roll.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Journal } from '../src/exec/journal.js';
import { upgradeOrder } from '../src/plan/upgrade/assemble.js';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';
import { capturedNames, planSecretNames, seedSecrets } from './trace/fake-secrets.js';
import { examplePlan } from './trace/run-trace.js';

const CHILD = repoPath('dist', 'test', 'helpers', 'upgrade-child.js');
const TRIALS = 3;

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Runs the child; with `killAt`, SIGKILLs it once LOG holds that many applied tasks. */
function child(state: string, log: string, killAt?: number): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD, state, log], { stdio: ['ignore', 'ignore', 'inherit'] });
    const poll =
      killAt === undefined
        ? undefined
        : setInterval(() => {
            if (lines(log).length >= killAt) p.kill('SIGKILL');
          }, 5);
    p.once('exit', (code, signal) => {
      clearInterval(poll);
      resolve({ code, signal });
    });
  });
}

describe('upgrade: kill -9 mid-roll, then resume', { timeout: 240_000 }, () => {
  const { plan, contents } = examplePlan('k8s-libvirt-3-2-1', 'upgrade');
  const text = readFileSync(repoPath('examples', 'k8s-libvirt-3-2-1.yaml'), 'utf8');
  const order = upgradeOrder(resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text }))).flatMap((g) =>
    g.nodes.map((n) => n.name),
  );
  const api = order[0] ?? '';
  /**
   * Tasks of the roll that belong to no node's turn: the preflight, the cache, the add-ons, the guard, and the
   * control planes' image pulls, which all run right after the preflight, ahead of their nodes' turns (each
   * node's cordon waits for its own pull, so a node that is through has pulled).
   */
  const SHARED = new Set(['upgrade-preflight', 'upgrade-images', 'upgrade-addons', 'upgrade-guard', 'calico-operator']);
  /** The node a task belongs to: the API steps and peer probes name it, its host steps run on it. */
  const nodeOf = (id: string): string | undefined => {
    const [, host = '', name = ''] = id.split('/');
    const named = order.find((n) => name.endsWith(`-${n}`));
    if (named !== undefined) return named;
    return order.includes(host) && !SHARED.has(name) ? host : undefined;
  };

  for (let trial = 0; trial < TRIALS; trial++)
    it(`trial ${trial + 1}: resumes with the node in progress, re-applies nothing done, touches no finished node`, async () => {
      const state = mkdtempSync(join(tmpdir(), 'kubemix-upgrade-kill-'));
      try {
        await seedSecrets(state, planSecretNames(plan, contents), capturedNames(plan));
        const log = join(state, 'applied.log');
        // Somewhere in the node rolls: past the first node's cordon, before the last node's uncordon.
        const killAt = 12 + Math.floor(Math.random() * (plan.tasks.length - 30));
        const first = await child(state, log, killAt);
        assert.equal(first.signal, 'SIGKILL', `the first run ended before the kill (exit ${first.code})`);
        const before = lines(log);
        const journal = await Journal.open(state, plan.cluster.name, plan.hash, 'read');
        const done = new Set(plan.tasks.filter((t) => journal.entry(t.id)?.state === 'done').map((t) => t.id));
        const through = order.filter((n) => done.has(`task-deploy-cluster/${api}/upgrade-uncordon-${n}`));
        const inProgress = order.find((n) => !through.includes(n));
        const second = await child(state, log);
        assert.equal(second.code, 0, 'the resumed run failed');
        const again = lines(log).slice(before.length);
        for (const id of again) assert.ok(!done.has(id), `${id} was done before the kill and ran again`);
        for (const id of again) {
          const node = nodeOf(id);
          if (node !== undefined)
            assert.ok(!through.includes(node), `${id} touched ${node}, which was through before the kill`);
        }
        const firstNodeStep = again.map(nodeOf).find((n) => n !== undefined && order.includes(n));
        assert.equal(firstNodeStep, inProgress, `resumed with ${firstNodeStep}, not ${inProgress}`);
        const end = await Journal.open(state, plan.cluster.name, plan.hash, 'read');
        assert.deepEqual(
          plan.tasks.filter((t) => end.entry(t.id)?.state !== 'done').map((t) => t.id),
          [],
          'every task done after the resume',
        );
      } finally {
        rmSync(state, { recursive: true, force: true });
      }
    });
});
