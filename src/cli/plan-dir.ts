// Writing a plan directory: plan.json plus artifacts/<node>/<path>, replacing
// DIR atomically — everything is written to a sibling temporary directory
// first, then swapped in, so a failure never leaves a partial DIR.
// Replacing deletes what DIR held, so only an empty directory, or one that
// holds exactly what kubemix wrote there, is replaced without --force: the
// marker PLAN_MARKER is the manifest of every file written (size and sha256;
// plan.json by its own hash), and a directory with a file added, changed or
// missing, or a marker copied into it, is refused.
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { InputError } from '../errors.js';
import { directoryPath, kindOf } from '../exec/local-paths.js';
import type { AssembledPlan, FileSink } from '../plan/assemble.js';
import type { Plan } from '../plan/types.js';
import { planFileHash, streamPlanJson, withPlanHash, type PlanBody } from '../plan/hash.js';
import { sha256Hex } from '../util/json.js';

/** Written into every plan directory: the manifest of what kubemix wrote there. */
export const PLAN_MARKER = '.kubemix-plan';
const MARKER_NOTE =
  'This directory was written by `kubemix plan --out`; the next `kubemix plan --out` here replaces it while it holds exactly these files.';

/** A file of the manifest: its size, and the sha256 of its bytes (plan.json: the plan hash its first lines name). */
interface ManifestEntry {
  readonly size: number;
  readonly sha256?: string;
  readonly planHash?: string;
}
type Manifest = Record<string, ManifestEntry>;

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
    // Nothing there: its folder must exist (a missing folder, a file where a folder belongs: exit 2).
    return directoryPath({ flag: '--out', given: out, cwd, code: 'flags.out' }, true).path;
  }
  if (!stat.isDirectory()) {
    const kind = stat.isSymbolicLink() ? 'a symbolic link' : (kindOf(stat) ?? 'a file');
    throw refuse(`is ${kind}, not a plan directory`, fresh);
  }
  const entries = readdirSync(dir);
  if (entries.length === 0 || options.force) return dir;
  const hint = 'name a new or empty directory, or pass --force to replace it';
  if (!entries.includes(PLAN_MARKER)) {
    const count = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`;
    throw refuse(
      `is a directory kubemix did not write (no ${PLAN_MARKER} in it) and not empty; replacing it would delete its ${count}`,
      hint,
    );
  }
  const strangers = notWrittenByKubemix(dir);
  if (strangers.length > 0) {
    const shown = strangers.slice(0, 5).join(', ') + (strangers.length > 5 ? `, … (${strangers.length} in all)` : '');
    throw refuse(`holds what kubemix did not write there (${shown}); replacing it would delete that`, hint);
  }
  return dir;
}

/** Every path under `dir` that is not in its manifest as written (added, changed, not a regular file), and every file the manifest names that is gone. */
function notWrittenByKubemix(dir: string): string[] {
  const manifest = readManifest(join(dir, PLAN_MARKER));
  if (manifest === undefined) return [`${PLAN_MARKER} (not a manifest kubemix wrote)`];
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      if (path === PLAN_MARKER) continue;
      const stat = lstatSync(join(dir, path));
      if (stat.isDirectory()) walk(path);
      else if (!stat.isFile()) out.push(`${path} (not a regular file)`);
      else if (!unchanged(join(dir, path), stat.size, manifest[path])) out.push(path);
      else seen.add(path);
    }
  };
  walk('');
  for (const path of Object.keys(manifest)) if (!seen.has(path) && !out.includes(path)) out.push(`${path} (gone)`);
  return out;
}

function readManifest(path: string): Manifest | undefined {
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { files?: unknown };
    const files = doc.files;
    if (files === null || typeof files !== 'object' || Array.isArray(files)) return undefined;
    return Object.assign(Object.create(null) as Manifest, files);
  } catch {
    return undefined;
  }
}

function unchanged(path: string, size: number, entry: ManifestEntry | undefined): boolean {
  if (entry === undefined || entry.size !== size) return false;
  const bytes = readFileSync(path);
  if (entry.planHash !== undefined) return planFileHash(bytes)?.actual === entry.planHash;
  return entry.sha256 === sha256Hex(bytes);
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
    const manifest: Manifest = {};
    const made = new Set<string>();
    const sink: FileSink = (file) => {
      const path = join(tmp, file.localPath);
      const folder = dirname(path);
      if (!made.has(folder)) mkdirSync(folder, { recursive: true });
      made.add(folder);
      // Artifacts keep their mode so an upload can copy it; never wider than 0644 here.
      writeFileSync(path, file.content, { mode: Number.parseInt(file.mode, 8) & 0o644 });
      chmodSync(path, Number.parseInt(file.mode, 8) & 0o644);
      manifest[file.localPath] = { size: Buffer.byteLength(file.content), sha256: sha256Hex(file.content) };
    };
    plan = writePlanJson(join(tmp, 'plan.json'), build(sink));
    manifest['plan.json'] = { size: statSync(join(tmp, 'plan.json')).size, planHash: plan.hash };
    const sorted = Object.fromEntries(Object.entries(manifest).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    writeFileSync(join(tmp, PLAN_MARKER), `${JSON.stringify({ note: MARKER_NOTE, files: sorted }, null, 1)}\n`);
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
