// Paths on the deployer that a user names (a flag, the spec argument) and
// that kubemix reads, writes or keeps state in. One set of checks for all of
// them, so a directory, FIFO, device, kernel file, dangling symlink, symlink
// loop, missing folder or read-only file is refused up front with exit 2 and
// a message naming the flag — never a crash, a hang on a FIFO, an endless read
// of /dev/zero, or a file written somewhere the user did not mean.
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  statfsSync,
  statSync,
  type Stats,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { writeFileDurable } from './durable.js';

/** A path as the user gave it: the flag (or `SPEC`) it came with and the directory it is relative to. */
export interface PathRef {
  /** `--out`, `--junit`, `--state-dir`, `SPEC`, … */
  readonly flag: string;
  readonly given: string;
  readonly cwd: string;
  /** The error code; default `flags.<flag without dashes>`. */
  readonly code?: string;
}

// statfs(2) magic numbers (linux/magic.h) of file systems whose "files" are the kernel's, not data.
const KERNEL_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, '/proc'],
  [0x62656572, '/sys'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x63677270, 'cgroup2'],
  [0x27e0eb, 'cgroup'],
  [0x1cd1, 'devpts'],
]);

export class PathProblem extends InputError {}

function refuse(ref: PathRef, problem: string, hint: string): PathProblem {
  const code = ref.code ?? `flags.${ref.flag.replace(/^-+/, '')}`;
  const shown = ref.given === '' ? "''" : ref.given;
  return new PathProblem(code, `${ref.flag} ${shown}: ${problem}`, { path: ref.flag, hint });
}

const errno = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? 'EIO';

/** What a non-regular file is (`a directory`, `a FIFO (named pipe)`, …); undefined for a regular file. */
export function kindOf(stat: Stats): string | undefined {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return stat.isFile() ? undefined : 'not a regular file';
}

function kernelFileSystem(path: string): string | undefined {
  try {
    return KERNEL_FILE_SYSTEMS.get(Number(statfsSync(path).type));
  } catch {
    return undefined;
  }
}

/** Why nothing is at `path`: a missing folder, a file where a folder belongs, a dangling link; else undefined. */
function whyMissing(path: string): string | undefined {
  let link: Stats | undefined;
  try {
    link = lstatSync(path);
  } catch (error) {
    if (errno(error) === 'ENOTDIR') return notAFolder(path);
    if (errno(error) !== 'ENOENT') return undefined;
  }
  if (link?.isSymbolicLink() === true) return `is a symbolic link to ${readlinkSync(path)}, which does not exist`;
  const parent = dirname(path);
  try {
    if (!statSync(parent).isDirectory()) return `${parent} is a file, not a folder`;
  } catch (error) {
    if (errno(error) === 'ENOTDIR') return notAFolder(parent);
    if (errno(error) === 'ELOOP') return `its folder ${parent} is a symbolic link loop`;
    return `its folder ${parent} does not exist`;
  }
  return undefined;
}

/** The first ancestor of `path` that exists and is not a folder. */
function notAFolder(path: string): string {
  for (let p = dirname(path); p !== dirname(p); p = dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) return `${p} is a file, not a folder`;
    } catch {
      continue;
    }
  }
  return 'a part of the path is a file, not a folder';
}

/** Stat through symlinks, each failure as the problem it means for the user. */
function statOf(ref: PathRef, path: string, hint: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const code = errno(error);
    if (code === 'ELOOP') throw refuse(ref, 'is a symbolic link loop', hint);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      const why = whyMissing(path);
      if (why !== undefined) throw refuse(ref, why, hint);
      return undefined;
    }
    throw refuse(ref, `cannot be examined (${code})`, hint);
  }
}

function checkRegular(ref: PathRef, path: string, stat: Stats, hint: string): void {
  const kind = kindOf(stat);
  if (kind !== undefined) throw refuse(ref, `is ${kind}, not a regular file`, hint);
  const kernel = kernelFileSystem(path);
  if (kernel !== undefined) throw refuse(ref, `is a file of the kernel (${kernel}), not a regular file`, hint);
}

/** Whether the caller may write `stat`'s file: its mode bits for us (root too: 0444 means "leave it"), and no read-only mount. */
export function writable(path: string, stat: Stats): boolean {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  const bits = uid === 0 ? 0o222 : stat.uid === uid ? 0o200 : stat.gid === gid ? 0o020 : 0o002;
  if ((stat.mode & bits) === 0) return false;
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function notEmpty(ref: PathRef, hint: string): string {
  if (ref.given.trim() === '') throw refuse(ref, 'is empty', hint);
  return resolve(ref.cwd, ref.given);
}

/** An existing regular file to read: its absolute path. */
export function inputFile(ref: PathRef, hint = 'name an existing regular file'): string {
  const path = notEmpty(ref, hint);
  const stat = statOf(ref, path, hint);
  if (stat === undefined) throw refuse(ref, 'does not exist', hint);
  checkRegular(ref, path, stat, hint);
  return path;
}

/**
 * A regular file's bytes, at most `maxBytes` (read up to one byte more to
 * tell: the kernel's files say size 0). `what` names the input in the message.
 */
export function readInputFile(ref: PathRef, maxBytes: number, what: string, hint?: string): Buffer {
  const path = inputFile(ref, hint);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(ref, `cannot be read (${errno(error)})`, hint ?? 'check its permissions');
  }
  try {
    // Opened without blocking: a FIFO swapped in after the check is seen here, not waited on.
    checkRegular(ref, path, fstatSync(fd), hint ?? 'name a regular file');
    const size = fstatSync(fd).size;
    if (size > maxBytes) throw refuse(ref, `is ${size} bytes, more than the ${maxBytes} ${what} may be`, hint ?? '');
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(size + 1, 64 * 1024)));
    let length = 0;
    for (;;) {
      if (length === buffer.length) break;
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes)
      throw refuse(ref, `holds more than the ${maxBytes} bytes ${what} may be`, hint ?? 'name a regular file');
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw refuse(ref, `cannot be read (${errno(error)})`, hint ?? 'check its permissions');
  } finally {
    closeSync(fd);
  }
}

export interface OutputTarget {
  /** Where the bytes go: the path, or the file a symbolic link at it points to. */
  readonly path: string;
  /** The mode bits and owner of the file there now; undefined when there is none. */
  readonly existing: { readonly mode: number; readonly uid: number; readonly gid: number } | undefined;
}

/**
 * A file kubemix is about to write. `replace`: whether an existing file may be
 * replaced (else "already exists"; the hint says how to allow it). Writes go
 * through a symbolic link to its target; a read-only file is refused.
 */
export function outputFile(ref: PathRef, replace: boolean | { readonly hint: string }): OutputTarget {
  const hint = 'name a regular file in an existing folder';
  const path = notEmpty(ref, hint);
  const stat = statOf(ref, path, hint);
  if (stat === undefined) {
    const folder = dirname(path);
    if (!writable(folder, statSync(folder))) throw refuse(ref, `its folder ${folder} is read-only`, hint);
    return { path, existing: undefined };
  }
  checkRegular(ref, path, stat, hint);
  if (replace !== true) throw refuse(ref, 'already exists', replace === false ? 'name a new file' : replace.hint);
  const real = realpathSync(path);
  if (!writable(real, stat))
    throw refuse(ref, 'is read-only', 'make it writable (chmod u+w) if it should be replaced, or name another file');
  return { path: real, existing: { mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid } };
}

/**
 * A directory: an existing one (through symbolic links), or, when `create`,
 * one to be made whose parent exists. Returns its absolute path and whether
 * it exists.
 */
export function directoryPath(ref: PathRef, create: boolean): { path: string; exists: boolean } {
  const hint = create ? 'name a directory, or a new one in an existing folder' : 'name an existing directory';
  const path = notEmpty(ref, hint);
  const stat = statOf(ref, path, hint);
  if (stat === undefined) {
    if (!create) throw refuse(ref, 'does not exist', hint);
    return { path, exists: false };
  }
  if (!stat.isDirectory()) throw refuse(ref, `is ${kindOf(stat) ?? 'a file'}, not a directory`, hint);
  const kernel = kernelFileSystem(path);
  if (kernel !== undefined) throw refuse(ref, `is a directory of the kernel (${kernel})`, hint);
  return { path, exists: true };
}

/** An I/O failure while writing a file the user named, as exit 2 naming the flag. */
export function writeFailed(ref: PathRef, error: unknown): PathProblem {
  return refuse(ref, `cannot be written (${errno(error)})`, 'check the folder exists, is writable and has room');
}

/**
 * Writes `data` to an output target durably (temp file, fsync, rename): new
 * files get `mode`; a file that exists keeps its mode and owner when
 * `keepMode`, else gets `mode`. Failures are exit 2 naming the flag.
 */
export async function writeOutputFile(
  ref: PathRef,
  target: OutputTarget,
  data: string | Buffer,
  mode: number,
  keepMode = false,
): Promise<void> {
  const existing = target.existing;
  try {
    await writeFileDurable(target.path, data, keepMode && existing !== undefined ? existing.mode : mode, existing);
  } catch (error) {
    throw writeFailed(ref, error);
  }
}
