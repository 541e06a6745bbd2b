// One run per cluster: a lock file (O_EXCL) holding the owner's pid and
// machine. A lock whose pid is gone on this machine is stale (kill -9) and is
// taken over; a live one refuses the run with exit 2 (`state.locked`).
import { hostname } from 'node:os';
import { join } from 'node:path';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { z } from 'zod';
import { kindOf } from './local-paths.js';
import { InputError } from '../errors.js';

interface LockBody {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
}

const LOCK_SCHEMA = z.object({ pid: z.number().int().positive(), host: z.string(), startedAt: z.string() });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function tryCreate(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    const body: LockBody = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
    await handle.writeFile(JSON.stringify(body));
    await handle.sync();
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Takes the state directory's lock; returns the function that releases it. */
export async function acquireLock(
  stateDir: string,
): Promise<{ release: () => Promise<void>; tookOverStale?: LockBody }> {
  const path = join(stateDir, 'lock');
  const release = (): Promise<void> => unlink(path).catch(() => undefined);
  if (await tryCreate(path)) return { release };
  const kind = kindOf(await lstat(path));
  if (kind !== undefined)
    throw new InputError('state.lock', `${path} is ${kind}, not kubemix's lock file`, {
      path,
      hint: 'remove it: kubemix makes the lock file itself',
    });
  // An empty or torn lock is one whose writer died between creating and filling it: stale.
  const body = await readFile(path, 'utf8').then(
    (text) => LOCK_SCHEMA.safeParse(safeJson(text)).data,
    () => undefined,
  );
  if (body !== undefined && (body.host !== hostname() || alive(body.pid))) {
    throw new InputError(
      'state.locked',
      `another kubemix run holds ${path} (pid ${body.pid} on ${body.host}, since ${body.startedAt})`,
      {
        path,
        hint: 'wait for it to finish; if that process is really gone (e.g. on another machine), delete the lock file',
      },
    );
  }
  await unlink(path).catch(() => undefined);
  if (!(await tryCreate(path)))
    throw new InputError('state.locked', `another kubemix run took ${path} just now`, { path });
  return body === undefined ? { release } : { release, tookOverStale: body };
}
