// `--fix` round trips: each test/lint-fix/<name> has a golden
// <name>.fixed.<ext>. Files named cluster-* are fixed against a cluster with
// windows-2022 and windows-2025 pools. Checks: output equals the golden file,
// every comment line survives, the result lints clean for the placement
// rules, and fixing again changes nothing. Every fixed pod spec also passes
// the Kubernetes PodSpec schema (kubernetes-models), pins its OS with
// something the scheduler reads (nodeSelector, required node affinity or a
// RuntimeClass, never spec.os.name alone), and keeps `os` to its one field:
// kubernetes-models does not reject unknown fields, so a selector label that
// landed under `os` needs that last check. UPDATE_GOLDEN=1 rewrites goldens.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { lintClusterFor } from '../src/lint/cluster.js';
import { analyse, lintSources } from '../src/lint/engine.js';
import { fixSources, unifiedDiff } from '../src/lint/fix.js';
import { Pod } from 'kubernetes-models/v1';
import type { LintOptions } from '../src/lint/engine.js';
import { repoPath } from './helpers/cli.js';

/** kubernetes-models' schema check of a pod spec (through a Pod, whose validate() throws on the first problem). */
function podSpecProblem(spec: unknown): string | undefined {
  try {
    new Pod({ metadata: { name: 'check' }, spec: spec as never }).validate();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
const DIR = join(repoPath(), 'test', 'lint-fix');
const PLACEMENT_FIXABLE = ['placement/missing-os', 'placement/os-name-missing', 'placement/missing-toleration'];
/** Inputs the fixer must leave as they are (pods mixing OSes need a human). */
const UNFIXABLE_OBJECTS = ['mixed'];

const inputs = readdirSync(DIR)
  .filter((f) => /\.(ya?ml|json)$/.test(f) && !f.includes('.fixed.'))
  .sort();

function golden(name: string): string {
  return join(DIR, name.replace(/\.(ya?ml|json)$/, '.fixed.$1'));
}

function comments(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /(^|\s)#/.test(l))
    .map((l) => l.slice(l.indexOf('#')));
}

for (const name of inputs) {
  test(`fix round trip: ${name}`, async () => {
    const options = name.startsWith('cluster-') ? { cluster: lintClusterFor(['windows-2022', 'windows-2025']) } : {};
    const before = readFileSync(join(DIR, name), 'utf8');
    const fixes = await fixSources([{ path: name, text: before }], options);
    assert.equal(fixes.length, 1, 'the fixer changes the file');
    const fix = fixes[0];
    assert.ok(fix !== undefined);
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(golden(name), fix.after);
    assert.ok(existsSync(golden(name)), `golden ${golden(name)} missing`);
    assert.equal(fix.after, readFileSync(golden(name), 'utf8'), unifiedDiff(fix));
    assert.equal(fix.reformatted, name.startsWith('null-'));
    for (const comment of comments(before)) assert.ok(fix.after.includes(comment), `comment lost: ${comment}`);
    const report = await lintSources([{ path: name, text: fix.after }], options);
    const left = report.findings.filter(
      (f) => PLACEMENT_FIXABLE.includes(f.rule) && !UNFIXABLE_OBJECTS.includes(f.object?.name ?? ''),
    );
    assert.deepEqual(left, []);
    assert.deepEqual(
      await fixSources([{ path: name, text: fix.after }], options),
      [],
      'a second --fix changes nothing',
    );
    await assertPlacedForTheScheduler(name, fix.after, options);
  });
}

/** Each fixed pod spec: valid PodSpec, `os` holds only `name`, and the scheduler sees the OS. */
async function assertPlacedForTheScheduler(name: string, text: string, options: LintOptions): Promise<void> {
  const analysis = await analyse([{ path: name, text }], options);
  for (const t of analysis.templates) {
    if (UNFIXABLE_OBJECTS.includes(t.template.object.name)) continue;
    const where = `${name} ${t.template.object.kind} ${t.template.object.name}`;
    const problem = podSpecProblem(t.spec);
    assert.equal(problem, undefined, `${where}: ${problem}`);
    const os = t.spec['os'] as Record<string, unknown> | undefined;
    assert.deepEqual(Object.keys(os ?? {}), ['name'], `${where}: spec.os is ${JSON.stringify(os)}`);
    const scheduling = t.placement.signals.filter((s) => s.via !== 'os.name');
    assert.ok(
      scheduling.length > 0 || t.placement.runtimeClassName !== undefined,
      `${where}: only spec.os.name places it`,
    );
    assert.ok(
      scheduling.every((s) => s.os === os?.['name']),
      `${where}: scheduler placement and spec.os.name disagree`,
    );
  }
}

test('fix leaves files with syntax errors and already placed files alone', async () => {
  const broken = { path: 'b.yaml', text: 'kind: Pod\nspec: {containers: [\n' };
  const placed = {
    path: 'p.yaml',
    text: 'kind: Pod\nmetadata: {name: p}\nspec:\n  os: {name: linux}\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: a, image: nginx}]\n',
  };
  assert.deepEqual(await fixSources([broken, placed]), []);
});
