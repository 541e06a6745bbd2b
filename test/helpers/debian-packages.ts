// Which Debian package installed a program, and which packages a machine with
// only the listed ones (plus a minimal Debian) is sure to have: the listed
// packages, everything they depend on (Depends, Pre-Depends; apt-get runs with
// --no-install-recommends), and the Essential and Priority: required packages
// a minbase debootstrap installs. Read from this machine's dpkg database.
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

export interface InstalledPackage {
  readonly base: boolean;
  readonly depends: readonly string[][];
  readonly provides: readonly string[];
}

export type PackageDb = ReadonlyMap<string, InstalledPackage>;

const bare = (name: string): string => name.trim().split(/[\s(]/)[0]!.replace(/:\w+$/, '');

/** Installed packages from dpkg-query (one call). */
export function readPackageDb(): PackageDb {
  const fields = [
    '${Package}',
    '${db:Status-Abbrev}',
    '${Essential}',
    '${Priority}',
    '${Pre-Depends}',
    '${Depends}',
    '${Provides}',
  ];
  const out = execFileSync('dpkg-query', ['-W', `-f=${fields.join('\\t')}\\n`], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const db = new Map<string, InstalledPackage>();
  for (const line of out.split('\n')) {
    const [name, status, essential, priority, pre, deps, provides] = line.split('\t');
    if (name === undefined || !status?.startsWith('ii')) continue;
    const depends = [pre, deps]
      .filter((d) => d !== undefined && d !== '')
      .flatMap((d) => d!.split(',').map((alt) => alt.split('|').map(bare)));
    db.set(name, {
      base: essential === 'yes' || priority === 'required',
      depends,
      provides: (provides ?? '')
        .split(',')
        .filter((p) => p.trim() !== '')
        .map(bare),
    });
  }
  return db;
}

/** The packages named in a list file such as scripts/apt-packages.txt. */
export function listedPackages(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Listed packages and what they depend on, transitively: of `a | b` the first, which apt-get picks on a fresh machine. */
export function dependencyClosure(db: PackageDb, listed: readonly string[]): Set<string> {
  const providers = new Map<string, string[]>();
  for (const [name, p] of db) for (const v of p.provides) providers.set(v, [...(providers.get(v) ?? []), name]);
  const seen = new Set<string>();
  const queue = [...listed];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    for (const real of db.has(name) ? [name] : (providers.get(name) ?? [])) {
      if (seen.has(real)) continue;
      seen.add(real);
      for (const alternatives of db.get(real)?.depends ?? [])
        if (alternatives[0] !== undefined) queue.push(alternatives[0]);
    }
  }
  return seen;
}

/** /usr/bin/x and /bin/x name one file on a merged-/usr Debian; dpkg knows only the one the package shipped. */
function pathVariants(path: string): string[] {
  const paths = new Set([path]);
  if (existsSync(path)) paths.add(realpathSync(path));
  for (const p of [...paths]) {
    const m = /^(\/usr)?(\/s?bin\/.*)$/.exec(p);
    if (m?.[2] !== undefined) paths.add(m[1] === undefined ? `/usr${m[2]}` : m[2]);
  }
  return [...paths];
}

export interface Resolved {
  /** The file the program name resolves to, when it is on PATH. */
  readonly path: string | undefined;
  /** The package that installed it (`dpkg -S`), when dpkg knows it. */
  readonly pkg: string | undefined;
}

/** Every file PATH offers for a program, in PATH order (an absolute path: itself). */
function onPath(program: string): string[] {
  if (program.startsWith('/')) return existsSync(program) ? [program] : [];
  const found: string[] = [];
  for (const dir of (process.env.PATH ?? '').split(':').filter(Boolean)) {
    try {
      accessSync(join(dir, program), constants.X_OK);
      found.push(join(dir, program));
    } catch {
      // not in this directory
    }
  }
  return found;
}

/**
 * PATH lookups and owners (`dpkg -S`, one call) of many programs. A program found
 * both outside Debian (a pyenv shim, /usr/local) and in a Debian package is judged
 * by the package: that is the copy a machine with only Debian's has.
 */
export function resolvePrograms(programs: readonly string[]): Map<string, Resolved> {
  const located = programs.map((p) => [p, onPath(p)] as const);
  const candidates = [...new Set(located.flatMap(([, paths]) => paths.flatMap(pathVariants)))];
  // dpkg -S exits 1 when one of the paths is unknown; the others are still answered on stdout.
  const owners = new Map<string, string>();
  const answer = candidates.length === 0 ? '' : spawnSync('dpkg', ['-S', ...candidates], { encoding: 'utf8' }).stdout;
  for (const line of answer.split('\n')) {
    const at = line.indexOf(': /');
    if (at < 0 || line.startsWith('diversion ')) continue;
    owners.set(line.slice(at + 2), bare(line.slice(0, at).split(',')[0]!));
  }
  const result = new Map<string, Resolved>();
  for (const [program, paths] of located) {
    const owned = paths.map((path) => ({
      path,
      pkg: pathVariants(path)
        .map((v) => owners.get(v))
        .find((o) => o !== undefined),
    }));
    result.set(program, owned.find((o) => o.pkg !== undefined) ?? { path: paths[0], pkg: undefined });
  }
  return result;
}
