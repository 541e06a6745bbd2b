// Every sh script in the plans (checks and applies) parsed by dash and
// linted by shellcheck as POSIX sh, with secret references filled by
// placeholders the way the executor fills them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { assembleResetPlan } from '../src/plan/reset.js';
import type { Plan } from '../src/plan/types.js';
import { SHAPES, modelFor, planFor } from './helpers/shapes.js';
import { examplePlan } from './trace/run-trace.js';

function scriptsOf(shape: (typeof SHAPES)[number]): { id: string; script: string }[] {
  // The deploy plan and the `kubemix down` plan alike.
  return [planFor(shape).plan, assembleResetPlan(modelFor(shape)).plan].flatMap(shellScripts);
}

function shellScripts(plan: Plan): { id: string; script: string }[] {
  return plan.tasks.flatMap((t) =>
    [t.check, t.apply].flatMap((c, i) =>
      c === null || c.shell !== 'sh'
        ? []
        : [
            {
              id: `${t.id} ${i === 0 ? 'check' : 'apply'}`,
              script: c.script.replace(/\{\{secret:[a-z0-9-]+\}\}/g, 'SECRET'),
            },
          ],
    ),
  );
}

describe('task shell scripts', () => {
  for (const shape of SHAPES) {
    it(`${shape}: dash -n and shellcheck -s sh accept every script`, () => {
      const scripts = scriptsOf(shape);
      assert.ok(scripts.length > 10);
      for (const { id, script } of scripts) {
        const parsed = spawnSync('dash', ['-n'], { input: script, encoding: 'utf8' });
        assert.equal(parsed.status, 0, `${id}: ${parsed.stderr}`);
        const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], { input: script, encoding: 'utf8' });
        assert.equal(lint.status, 0, `${id}:\n${lint.stdout}`);
      }
    });
  }
});

describe('day 2 shell scripts', () => {
  // The upgrade and patch --linux plans of the bundled examples (flannel and Calico), each distinct script once.
  for (const example of ['k8s-libvirt-3-2-1', 'calico-mixed'] as const) {
    it(`${example}: upgrade and patch --linux scripts pass dash -n and shellcheck -s sh`, () => {
      const plans = (['upgrade', 'patch --linux'] as const).map((c) => examplePlan(example, c).plan);
      const scripts = new Map(plans.flatMap(shellScripts).map((s) => [s.script, s.id]));
      assert.ok(scripts.size > 10);
      for (const [script, id] of scripts) {
        const parsed = spawnSync('dash', ['-n'], { input: script, encoding: 'utf8' });
        assert.equal(parsed.status, 0, `${id}: ${parsed.stderr}`);
        const lint = spawnSync('shellcheck', ['-s', 'sh', '-S', 'warning', '-'], { input: script, encoding: 'utf8' });
        assert.equal(lint.status, 0, `${id}:\n${lint.stdout}`);
      }
    });
  }
});
