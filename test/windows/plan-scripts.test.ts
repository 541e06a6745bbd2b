// Every PowerShell script any example plan (deploy, `down` and `upgrade`) carries (and `patch`'s) — Windows node steps and
// the generic fact-gathering and validation tasks alike — parses under the
// real grammar, passes our PowerShell rules and defines (or dot-sources from a
// file its host's tasks upload) every kubemix helper it calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { resolveModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { assembleResetPlan } from '../../src/plan/reset.js';
import { assembleUpgradePlan } from '../../src/plan/upgrade/assemble.js';
import { assemblePatchPlan } from '../../src/plan/patch/assemble.js';
import { readSpec } from '../../src/spec/read.js';
import { repoPath } from '../helpers/cli.js';
import { hostFiles } from './fixtures.js';
import { lintPowerShell, parseErrors, undefinedHelpers } from './powershell.js';

test('every PowerShell command in every example plan parses and passes the rules', () => {
  let checked = 0;
  for (const file of readdirSync(repoPath('examples')).filter((f) => f.endsWith('.yaml'))) {
    const spec = readSpec({ kind: 'file', path: file, text: readFileSync(repoPath('examples', file), 'utf8') });
    const model = resolveModel(spec);
    const upgrade = [
      ...assembleUpgradePlan(model, { from: '1.35.6', maxUnavailable: 1 }).plan.tasks,
      ...assemblePatchPlan(model, { kbs: ['KB5040437'], securityOnly: true, maxUnavailable: 1 }).plan.tasks,
    ];
    const up = assemblePlan(model);
    // A deploy's Windows applies dot-source the helpers file its tasks upload; reset and day-2 scripts define their own.
    const onHost = (host: string): Map<string, string> => hostFiles(up.plan, up.files, host);
    const tasks = [
      ...up.plan.tasks.map((t) => ({ t, files: onHost(t.host) })),
      ...[...assembleResetPlan(model).plan.tasks, ...upgrade].map((t) => ({ t, files: new Map<string, string>() })),
    ];
    for (const { t: task, files } of tasks) {
      for (const command of [task.check, task.apply]) {
        if (command?.shell !== 'powershell') continue;
        assert.deepEqual(parseErrors(command.script), [], `${file}: ${task.id}`);
        assert.deepEqual(lintPowerShell(command.script), [], `${file}: ${task.id}`);
        assert.deepEqual(undefinedHelpers(command.script, files), [], `${file}: ${task.id}`);
        checked += 1;
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} PowerShell commands found`);
});
