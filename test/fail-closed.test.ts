// Sizes are bounded at the spec boundary, and every numeric comparison a
// plan runs in sh fails closed: a value that is not a number (a size past
// exact integers printed as 1e+23, an empty read) fails the check instead
// of making `[` error out inside an `if` that then skips the failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { InvalidSpecError } from '../src/errors.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import type { Task } from '../src/plan/types.js';
import { readSpec, type SpecSource } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';

const EXAMPLES = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

function example(name: string): Record<string, unknown> {
  return parse(readFileSync(repoPath(`examples/${name}`), 'utf8')) as Record<string, unknown>;
}

function tasksOf(source: SpecSource): readonly Task[] {
  return assemblePlan(resolveModel(readSpec(source))).plan.tasks;
}

function fileSource(doc: Record<string, unknown>): SpecSource {
  return { kind: 'file', path: 'bounds.yaml', text: stringify(doc) };
}

function refusedAt(source: SpecSource): string[] {
  try {
    tasksOf(source);
  } catch (e) {
    assert.ok(e instanceof InvalidSpecError, String(e));
    return e.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.path}: ${d.message}`);
  }
  return [];
}

test('sizes past what a machine can have are refused with their path', () => {
  const withWorker = (ram: string, disk = '100Gi') => {
    const doc = example('k8s-libvirt-1-1-1.yaml');
    const w = (doc['spec'] as { nodes: { workers: Record<string, unknown>[] } }).nodes.workers[0];
    assert.ok(w !== undefined);
    w['ram'] = ram;
    w['disk'] = disk;
    return fileSource(doc);
  };
  assert.match(
    refusedAt(withWorker('99999999999Ti')).join('\n'),
    /^spec\.nodes\.workers\[0\]\.ram: must be at most 64Ti/m,
  );
  assert.match(refusedAt(withWorker('65Ti')).join('\n'), /^spec\.nodes\.workers\[0\]\.ram: /m);
  assert.match(
    refusedAt(withWorker('8Gi', '1025Ti')).join('\n'),
    /^spec\.nodes\.workers\[0\]\.disk: must be at most 1024Ti/m,
  );
  assert.match(refusedAt(withWorker('1'.repeat(40) + 'Mi')).join('\n'), /^spec\.nodes\.workers\[0\]\.ram: /m);
  assert.deepEqual(refusedAt(withWorker('64Ti', '1024Ti')), []);
});

test('a Kubeinit ram= of 10^23 KiB is refused before it loses precision', () => {
  const errors = refusedAt({
    kind: 'kubeinit',
    spec: 'k8s-libvirt-1-1-1',
    nodes: `[[when_group=compute_nodes,ram=1${'0'.repeat(23)}]]`,
  });
  assert.match(errors.join('\n'), /ram must be a number .* at most 64Ti/);
});

// `[ a -op b ]` used so that only its success lets the check pass: `[ … ] || fail`, or `if [ … ] && [ … ]; then :; else fail`.
const NUMERIC_TEST = /\[ [^\]\n]*? -(lt|gt|le|ge|eq|ne) [^\]\n]*? \]/g;
const FAIL_CLOSED_AFTER = /^(?: && \[ [^\]\n]*? \])*(?: \|\||; then :; else)/;

test('every numeric shell comparison in every example plan fails closed (static)', () => {
  let seen = 0;
  for (const name of EXAMPLES) {
    for (const t of tasksOf(fileSource(example(name)))) {
      for (const c of [t.apply, t.check]) {
        if (c === null || c.shell !== 'sh') continue;
        for (const m of c.script.matchAll(NUMERIC_TEST)) {
          seen++;
          const before = c.script.slice(Math.max(0, m.index - 40), m.index);
          const after = c.script.slice(m.index + m[0].length);
          const chained = /\] && $/.test(before);
          assert.ok(
            chained || FAIL_CLOSED_AFTER.test(after),
            `${t.id}: "${m[0]}${after.slice(0, 30)}" does not fail when [ errors`,
          );
        }
      }
    }
  }
  assert.ok(seen >= 3, `only ${seen} numeric comparisons found: the pattern no longer matches the scripts`);
});

function run(script: string): number {
  return spawnSync('sh', ['-c', script], { encoding: 'utf8', timeout: 30_000 }).status ?? -1;
}

test('the hypervisor capacity check fails on sizes that are not numbers (run)', () => {
  const capacity = tasksOf(fileSource(example('k8s-libvirt-1-1-1.yaml'))).find((t) => t.name === 'capacity');
  assert.ok(capacity !== undefined);
  const script = capacity.apply.script;
  assert.match(script, /^need_ram=\d+$/m);
  const zero = script
    .replace(/^need_ram=.*$/m, 'need_ram=0')
    .replace(/^need_disk=.*$/m, 'need_disk=0')
    .replace(/^need_vcpus=.*$/m, 'need_vcpus=0')
    .replace(/^widest=.*$/m, 'widest=0');
  assert.equal(run(zero), 0, 'the check passes when nothing is needed');
  assert.notEqual(run(zero.replace(/^need_ram=.*$/m, 'need_ram=1e+23')), 0, 'need_ram as JavaScript prints 10^23');
  assert.notEqual(run(zero.replace(/^need_disk=.*$/m, 'need_disk=')), 0, 'an empty need_disk');
  assert.notEqual(run(zero.replace(/^have_ram=.*$/m, 'have_ram=unknown')), 0, 'an unreadable have_ram');
  assert.notEqual(run(zero.replace(/^have_disk=.*$/m, 'have_disk=')), 0, 'an empty have_disk');
  assert.notEqual(run(zero.replace(/^have_cpus=.*$/m, 'have_cpus=')), 0, 'an empty have_cpus');
  assert.notEqual(run(zero.replace(/^widest=.*$/m, 'widest=two')), 0, 'a vCPU count that is not a number');
});

test(
  'the existing-host size check fails on sizes that are not numbers (run)',
  {
    skip:
      !/^ID=debian$/m.test(readFileSync('/etc/os-release', 'utf8')) ||
      !/^VERSION_ID="?12"?$/m.test(readFileSync('/etc/os-release', 'utf8'))
        ? 'needs a Debian 12 host (the check first compares /etc/os-release)'
        : false,
  },
  () => {
    const check = tasksOf(fileSource(example('existing-host-gw.yaml'))).find(
      (t) => t.host === 'lin1' && t.name === 'os-and-size',
    );
    assert.ok(check !== undefined);
    const script = check.apply.script;
    assert.equal(run(script), 0, 'a worker needs 1 CPU and any RAM: this host passes');
    assert.notEqual(run(script.replace(/^ram=.*$/m, 'ram=garbage')), 0);
    assert.notEqual(run(script.replace(/^cpus=.*$/m, 'cpus=')), 0);
  },
);
