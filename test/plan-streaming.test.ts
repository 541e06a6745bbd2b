// `plan --out` takes each artifact as its contributor makes it: the artifact
// texts of a large cluster are written out as they come, never all held.
// assemblePlanTo must give the very plan assemblePlan gives, and hand the sink
// every file assemblePlan returns.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan, assemblePlanTo, CONTRIBUTORS, type PlanFile } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { writePlanDirFrom } from '../src/cli/plan-dir.js';
import { repoPath } from './helpers/cli.js';

const model = (): ReturnType<typeof resolveModel> =>
  resolveModel(
    readSpec({
      kind: 'file',
      path: repoPath('examples/k8s-libvirt-3-2-1.yaml'),
      text: readFileSync(repoPath('examples/k8s-libvirt-3-2-1.yaml'), 'utf8'),
    }),
  );

describe('plan artifacts streamed to a sink', () => {
  it('assemblePlanTo makes the plan assemblePlan makes and hands over every file', () => {
    const whole = assemblePlan(model());
    const streamed: PlanFile[] = [];
    const plan = assemblePlanTo(model(), (f) => streamed.push(f));
    assert.deepEqual(plan, whole.plan);
    assert.equal(streamed.length, whole.files.length);
    const byPath = new Map(streamed.map((f) => [f.localPath, f]));
    for (const f of whole.files) assert.deepEqual(byPath.get(f.localPath), f, f.localPath);
  });

  it('each artifact is on disk before the later contributors run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-stream-'));
    try {
      const m = model();
      const seenOnDisk: boolean[] = [];
      let firstFile: string | undefined;
      const tmp = join(dir, `.plan.tmp-${process.pid}`);
      const contributors = CONTRIBUTORS.map((c, i) => (x: typeof m) => {
        // When a later contributor runs, the first artifact must already be written in the temporary directory.
        if (i > 0 && firstFile !== undefined) seenOnDisk.push(existsSync(join(tmp, firstFile)));
        return c(x);
      });
      const plan = writePlanDirFrom(join(dir, 'plan'), (sink) =>
        assemblePlanTo(
          m,
          (f) => {
            firstFile ??= f.localPath;
            sink(f);
          },
          contributors,
        ),
      );
      assert.ok(firstFile !== undefined, 'the example has artifacts');
      assert.ok(seenOnDisk.length > 0 && seenOnDisk.every(Boolean), 'artifacts written as they come');
      const written = JSON.parse(readFileSync(join(dir, 'plan', 'plan.json'), 'utf8')) as { hash: string };
      assert.equal(written.hash, plan.hash);
      assert.ok(existsSync(join(dir, 'plan', firstFile)));
      assert.ok(!existsSync(tmp), 'temporary directory swapped in');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a plan that fails after some artifacts were written leaves nothing behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-stream-'));
    try {
      const failing = [
        ...CONTRIBUTORS,
        () => {
          throw new Error('contributor failed');
        },
      ];
      assert.throws(
        () => writePlanDirFrom(join(dir, 'plan'), (sink) => assemblePlanTo(model(), sink, failing)),
        /contributor failed/,
      );
      assert.deepEqual(readdirSync(dir), []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
