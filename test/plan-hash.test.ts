// The plan hash covers plan.json's bytes as kubemix writes them, less the
// hash line: the planner hashes the pieces it writes, the executor the bytes
// it reads. Both must agree with the one definition, and any edit must show.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { writePlanDirFrom } from '../src/cli/plan-dir.js';
import { readPlanDir } from '../src/exec/plan-dir.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlanBodyTo, type FileSink } from '../src/plan/assemble.js';
import { HASH_PLACEHOLDER, planFileHash, planHash, withPlanHash, writePlanText } from '../src/plan/hash.js';
import type { Plan } from '../src/plan/types.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath } from './helpers/cli.js';

const SPEC = repoPath('examples/k8s-libvirt-3-2-1.yaml');
const body = (sink: FileSink = () => {}): ReturnType<typeof assemblePlanBodyTo> =>
  assemblePlanBodyTo(resolveModel(readSpec({ kind: 'file', path: SPEC, text: readFileSync(SPEC, 'utf8') })), sink);
const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');
const fileText = (plan: Plan): string => `${JSON.stringify(plan, null, 2)}\n`;

describe('plan hash', () => {
  it('is sha256 of the body as JSON.stringify(body, null, 2) writes it, with a newline', () => {
    const b = body();
    assert.equal(planHash(b), sha(`${JSON.stringify(b, null, 2)}\n`));
    // A plan's own hash field is not part of what it covers.
    assert.equal(planHash({ ...b, hash: 'f'.repeat(64) }), planHash(b));
  });

  it('writePlanText writes JSON.stringify of the plan; only the hash line is uncovered', () => {
    const b = body();
    const all: string[] = [];
    const covered: string[] = [];
    writePlanText(b, HASH_PLACEHOLDER, (piece, hashed) => {
      all.push(piece);
      if (hashed) covered.push(piece);
    });
    assert.equal(all.join(''), fileText(withPlanHash(b, HASH_PLACEHOLDER)));
    assert.equal(covered.join(''), `${JSON.stringify(b, null, 2)}\n`);
    assert.deepEqual(Object.keys(withPlanHash(b)).slice(0, 4), ['apiVersion', 'kind', 'hash', 'cluster']);
  });

  it('planFileHash reads the hash line of a written plan and hashes the rest', () => {
    const plan = withPlanHash(body());
    const bytes = Buffer.from(fileText(plan));
    assert.deepEqual(planFileHash(bytes), { actual: plan.hash, named: plan.hash });
  });

  it('any edit of the file changes what it hashes to: a script, whitespace', () => {
    const plan = withPlanHash(body());
    const text = fileText(plan);
    const edits = [
      text.replace('systemctl', 'systemct1'),
      text.replace('\n  "tasks": [', '\n  "tasks":  ['),
      `${text}\n`,
    ];
    for (const edited of edits) {
      assert.notEqual(edited, text);
      assert.notEqual(planFileHash(Buffer.from(edited))?.actual, plan.hash);
    }
    // No hash line where plan.json has it (third key, indented two spaces): nothing to compare.
    const { hash, ...rest } = plan;
    assert.equal(planFileHash(Buffer.from(`${JSON.stringify({ ...rest, hash }, null, 2)}\n`)), undefined);
    assert.equal(planFileHash(Buffer.from(JSON.stringify(plan))), undefined);
  });

  it('plan --out writes the hash over its placeholder; the executor reads the plan back; an edit is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubemix-plan-hash-'));
    try {
      let b: ReturnType<typeof body> | undefined;
      const plan = writePlanDirFrom(join(dir, 'plan'), (sink) => (b = body(sink)));
      assert.ok(b !== undefined);
      const file = join(dir, 'plan', 'plan.json');
      const bytes = readFileSync(file);
      assert.equal(plan.hash, planHash(b));
      assert.equal(bytes.toString('utf8'), fileText(plan));
      assert.ok(!bytes.includes(HASH_PLACEHOLDER), 'placeholder replaced');
      assert.equal((await readPlanDir(join(dir, 'plan'))).plan.hash, plan.hash);
      writeFileSync(file, bytes.toString('utf8').replace('"kind": "Plan",', '"kind":"Plan",'));
      await assert.rejects(readPlanDir(join(dir, 'plan')), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'plan.hash-mismatch');
        assert.match(e.message, new RegExp(`plan hash ${plan.hash} does not match its content`));
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
