import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveModel } from '../model/resolve.js';
import { assemblePlan } from '../plan/assemble.js';
import { readSpec } from '../spec/read.js';
import { taskInputHash } from './hash.js';
import type { JournalDocument, JournalEntry } from './journal.js';
import { clusterStatus } from './status.js';

const plan = assemblePlan(resolveModel(readSpec({ kind: 'kubeinit', spec: 'k8s-existing-1-1-1' }))).plan;
const artifacts = new Map(plan.artifacts.map((a) => [a.id, a]));
// The executor's input hash covers the downloads a task names (their source and hash).
const downloads = new Map((plan.downloads ?? []).map((d) => [d.id, d]));

function journal(entries: Record<string, Partial<JournalEntry> & { state: JournalEntry['state'] }>): JournalDocument {
  const tasks: Record<string, JournalEntry> = {};
  for (const [id, e] of Object.entries(entries)) {
    const t = plan.tasks.find((x) => x.id === id) ?? assert.fail(id);
    tasks[id] = { host: t.host, attempts: 1, inputHash: taskInputHash(t, artifacts, downloads), ...e };
  }
  return { version: 1, cluster: 'k8scluster', planHash: plan.hash, updatedAt: '', tasks };
}

test('never run: everything left, incomplete', () => {
  const s = clusterStatus(plan, undefined);
  assert.equal(s.complete, false);
  assert.equal(s.journalPlanHash, undefined);
  assert.ok(s.tasks.every((t) => t.status === 'left'));
});

test('done, failed and outdated tasks are told apart per host', () => {
  const [first, second, third] = plan.tasks.filter((t) => t.host === 'controller-01');
  assert.ok(first && second && third);
  const s = clusterStatus(
    plan,
    journal({
      [first.id]: { state: 'done' },
      [second.id]: { state: 'done', inputHash: 'an older input' },
      [third.id]: { state: 'failed', error: 'boom' },
    }),
  );
  const byId = new Map(s.tasks.map((t) => [t.id, t.status]));
  assert.equal(byId.get(first.id), 'done');
  assert.equal(byId.get(second.id), 'outdated');
  assert.equal(byId.get(third.id), 'failed');
  const host = s.hosts.find((h) => h.host === 'controller-01');
  assert.equal(host?.done, 1);
  assert.equal(host?.failed, 1);
  assert.deepEqual(host?.failures, [{ id: third.id, error: 'boom' }]);
  assert.equal(host?.next, second.id);
});

test("every task done with today's inputs: complete", () => {
  const all = Object.fromEntries(plan.tasks.map((t) => [t.id, { state: 'done' as const }]));
  assert.equal(clusterStatus(plan, journal(all)).complete, true);
});
