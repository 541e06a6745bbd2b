// Reads a plan directory written by `kubemix plan --out DIR`: DIR/plan.json
// plus DIR/artifacts/<node>/<path>. Validates the plan, checks its hash and
// every artifact's sha256 before anything runs.
import { isAbsolute, join, normalize, sep } from 'node:path';
import { InputError, InvalidSpecError, type Diagnostic } from '../errors.js';
import type { Plan } from '../plan/types.js';
import { planFileHash, planHash, sha256 } from './hash.js';
import { readInputFile } from './local-paths.js';
import { checkPlanRules, planSchema } from './plan-check.js';

export interface LoadedPlan {
  readonly plan: Plan;
  readonly dir: string;
  /** Artifact contents by id, sha256 verified. */
  readonly artifacts: ReadonlyMap<string, Buffer>;
}

/**
 * plan.json may be this large: V8's longest string is 2^29 - 24 characters,
 * and a plan of 5000 nodes is ~250 MB (docs/scale.md).
 */
export const MAX_PLAN_JSON_BYTES = 2 ** 29 - 24;

/** One rendered file: configs and scripts, far below this. */
const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

export async function readPlanDir(dir: string): Promise<LoadedPlan> {
  const file = join(dir, 'plan.json');
  let raw: unknown;
  // A directory, FIFO, device or /dev/zero behind a link is refused before anything is read.
  const bytes = readInputFile(
    { flag: '--plan', given: file, cwd: dir, code: 'plan.unreadable' },
    MAX_PLAN_JSON_BYTES,
    'plan.json',
    'write one with `kubemix plan SPEC --out DIR`',
  );
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InputError('plan.unreadable', `${file}: ${(error as Error).message}`, {
      path: file,
      hint: 'write one with `kubemix plan SPEC --out DIR`',
      cause: error,
    });
  }
  const plan = validatePlan(raw, file, bytes);
  return { plan, dir, artifacts: await readPlanArtifacts(plan, dir) };
}

/** `bytes`: the file the plan was read from, whose own bytes are hashed (else the plan is written out to hash it). */
export function validatePlan(raw: unknown, source: string, bytes?: Buffer): Plan {
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) {
    const diags: Diagnostic[] = parsed.error.issues.map((i) => ({
      code: 'plan.schema',
      severity: 'error',
      path: i.path.join('.') || '(root)',
      message: i.message,
    }));
    throw new InvalidSpecError(source, diags);
  }
  const plan = raw as Plan;
  const rules = checkPlanRules(plan);
  if (rules.length > 0) throw new InvalidSpecError(source, rules);
  const actual = bytes === undefined ? planHash(plan) : planFileHash(bytes)?.actual;
  if (actual !== plan.hash) {
    throw new InputError(
      'plan.hash-mismatch',
      `${source}: plan hash ${plan.hash} does not match its content (${actual ?? 'no "hash" line after "kind"'})`,
      { path: source, hint: 'the plan was edited or truncated; write it again with `kubemix plan`' },
    );
  }
  return plan;
}

/** Reads every artifact under `dir` (a plan directory) and verifies its sha256. */
export async function readPlanArtifacts(plan: Plan, dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const bad: Diagnostic[] = [];
  for (const a of plan.artifacts) {
    const rel = normalize(a.localPath);
    if (isAbsolute(rel) || rel.startsWith(`..${sep}`) || rel === '..') {
      bad.push({
        code: 'plan.artifact-path',
        severity: 'error',
        path: a.id,
        message: `localPath ${a.localPath} leaves the plan directory`,
      });
      continue;
    }
    try {
      const content = readInputFile(
        { flag: 'artifact', given: join(dir, rel), cwd: dir },
        MAX_ARTIFACT_BYTES,
        'an artifact',
      );
      if (sha256(content) !== a.sha256)
        bad.push({
          code: 'plan.artifact-sha256',
          severity: 'error',
          path: a.id,
          message: `${a.localPath}: sha256 ${sha256(content)} differs from the plan's ${a.sha256}`,
        });
      else out.set(a.id, content);
    } catch (error) {
      bad.push({
        code: 'plan.artifact-missing',
        severity: 'error',
        path: a.id,
        message:
          error instanceof InputError ? error.message.replace(/^artifact /, '') : `${a.localPath}: ${String(error)}`,
      });
    }
  }
  if (bad.length > 0) throw new InvalidSpecError(join(dir, 'artifacts'), bad);
  return out;
}
