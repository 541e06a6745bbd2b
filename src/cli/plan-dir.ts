// Writing a plan directory: plan.json plus artifacts/<node>/<path>, replacing
// DIR atomically — everything is written to a sibling temporary directory
// first, then swapped in, so a failure never leaves a partial DIR.
// Replacing deletes what DIR held, so only a directory kubemix wrote (it holds
// PLAN_MARKER) or an empty one is replaced without --force.
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { InputError } from '../errors.js';
import type { AssembledPlan, FileSink } from '../plan/assemble.js';
import type { Plan } from '../plan/types.js';
import { streamPlanJson, withPlanHash, type PlanBody } from '../plan/hash.js';

/** Written into every plan directory; its presence lets the next `plan --out` replace the directory. */
export const PLAN_MARKER = '.kubemix-plan';
const MARKER_TEXT =
  'This directory was written by `kubemix plan --out`; the next `kubemix plan --out` here replaces all of it.\n';

export interface PlanOutOptions {
  readonly force: boolean;
  /** Paths that must survive: the working directory, the spec file. */
  readonly keep: readonly string[];
}

/** The absolute plan directory for `--out OUT`, or an exit-2 error when writing there would destroy something else. */
export function checkPlanOut(out: string, cwd: string, options: PlanOutOptions): string {
  const dir = resolve(cwd, out);
  const refuse = (message: string, hint: string): InputError =>
    new InputError('flags.out', `--out ${out}: ${message}`, { path: '--out', hint });
  const fresh = 'name a new directory for the plan, e.g. --out plan';
  const held = options.keep.find((p) => isInside(resolve(cwd, p), dir));
  if (held !== undefined) {
    throw refuse(`the plan directory would replace ${dir}, which holds ${held}`, fresh);
  }
  let stat;
  try {
    stat = lstatSync(dir);
  } catch {
    return dir;
  }
  if (!stat.isDirectory()) {
    throw refuse(`${stat.isSymbolicLink() ? 'is a symbolic link' : 'is a file'}, not a plan directory`, fresh);
  }
  const entries = readdirSync(dir);
  if (entries.length === 0 || entries.includes(PLAN_MARKER) || options.force) return dir;
  const count = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`;
  throw refuse(
    `is a directory kubemix did not write (no ${PLAN_MARKER} in it) and not empty; replacing it would delete its ${count}`,
    'name a new or empty directory, or pass --force to replace it',
  );
}

/** Whether `path` is `dir` or lies under it. */
function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * plan.json for `body`, written in ~64 KiB pieces (the plan of 5000 nodes is
 * ~250 MB of JSON, never held as one string) and hashed as it is written: the
 * hash line holds a placeholder until the last piece, then the hash is written
 * over it in place (plan/hash.ts). Returns the plan with its hash.
 */
export function writePlanJson(path: string, body: PlanBody): Plan {
  const fd = openSync(path, 'w', 0o644);
  try {
    const { hash, hashAt } = streamPlanJson(body, (bytes) => {
      for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done);
    });
    writeSync(fd, hash, hashAt, 'latin1');
    return withPlanHash(body, hash);
  } finally {
    closeSync(fd);
  }
}

export function writePlanDir(target: string, assembled: AssembledPlan): void {
  writePlanDirFrom(target, (sink) => {
    assembled.files.forEach(sink);
    return assembled.plan;
  });
}

/**
 * Writes the plan `build` makes, each artifact as `build` hands it to the sink
 * (a large plan's artifact texts are never all in memory), then plan.json;
 * returns the plan.
 */
export function writePlanDirFrom(target: string, build: (sink: FileSink) => PlanBody): Plan {
  const dir = resolve(target);
  const parent = dirname(dir);
  if (!existsSync(parent))
    throw new InputError('flags.out', `the parent directory of ${target} does not exist`, { path: '--out' });
  const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}`);
  const old = join(parent, `.${basename(dir)}.old-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  let plan: Plan;
  try {
    mkdirSync(join(tmp, 'artifacts'), { recursive: true });
    writeFileSync(join(tmp, PLAN_MARKER), MARKER_TEXT);
    const made = new Set<string>();
    const sink: FileSink = (file) => {
      const path = join(tmp, file.localPath);
      const folder = dirname(path);
      if (!made.has(folder)) mkdirSync(folder, { recursive: true });
      made.add(folder);
      // Artifacts keep their mode so an upload can copy it; never wider than 0644 here.
      writeFileSync(path, file.content, { mode: Number.parseInt(file.mode, 8) & 0o644 });
      chmodSync(path, Number.parseInt(file.mode, 8) & 0o644);
    };
    plan = writePlanJson(join(tmp, 'plan.json'), build(sink));
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(tmp, dir);
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(dir) && existsSync(old)) renameSync(old, dir);
    throw error;
  }
  rmSync(old, { recursive: true, force: true });
  return plan;
}
