// Writing a plan directory: plan.json plus artifacts/<node>/<path>, replacing
// DIR atomically — everything is written to a sibling temporary directory
// first, then swapped in, so a failure never leaves a partial DIR.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import type { AssembledPlan } from '../plan/assemble.js';

export function writePlanDir(target: string, assembled: AssembledPlan): void {
  const dir = resolve(target);
  const parent = dirname(dir);
  if (!existsSync(parent)) throw new InputError('flags.out', `the parent directory of ${target} does not exist`, { path: '--out' });
  const tmp = join(parent, `.${basename(dir)}.tmp-${process.pid}`);
  const old = join(parent, `.${basename(dir)}.old-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  try {
    mkdirSync(join(tmp, 'artifacts'), { recursive: true });
    writeFileSync(join(tmp, 'plan.json'), `${JSON.stringify(assembled.plan, null, 2)}\n`);
    for (const file of assembled.files) {
      const path = join(tmp, file.localPath);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.content);
      // Artifacts keep their mode so an upload can copy it; never wider than 0644 here.
      chmodSync(path, Number.parseInt(file.mode, 8) & 0o644);
    }
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(tmp, dir);
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(dir) && existsSync(old)) renameSync(old, dir);
    throw error;
  }
  rmSync(old, { recursive: true, force: true });
}
