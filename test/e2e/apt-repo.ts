// A local Debian package repository for the VM tier, made by the test: small
// packages built with dpkg-deb (each installs one file under /usr/share/doc),
// and the `Packages` index apt reads from a flat `file:` repository (the
// stanza dpkg-scanpackages writes: the control fields, Filename, Size,
// SHA256). The VMs have no route to a Debian mirror.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Package {
  readonly name: string;
  readonly version: string;
}

/** Builds `name_version_all.deb` into `dir`; returns its path. */
export function buildDeb(work: string, p: Package, dir: string): string {
  const root = join(work, 'build', `${p.name}-${p.version}`);
  mkdirSync(join(root, 'DEBIAN'), { recursive: true });
  mkdirSync(join(root, 'usr', 'share', 'doc', p.name), { recursive: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(root, 'usr', 'share', 'doc', p.name, 'version'), `${p.version}\n`);
  writeFileSync(
    join(root, 'DEBIAN', 'control'),
    `Package: ${p.name}\nVersion: ${p.version}\nArchitecture: all\nMaintainer: kubemix e2e <e2e@example.invalid>\nDescription: kubemix patch e2e package\n`,
  );
  const file = join(dir, `${p.name}_${p.version}_all.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, file], { stdio: 'ignore' });
  return file;
}

/** The `Packages` index of a flat repository holding `files` (paths relative to the repository: ./NAME). */
export function packagesIndex(files: readonly string[]): string {
  return files
    .map((file) => {
      const body = readFileSync(file);
      const control = execFileSync('dpkg-deb', ['-f', file], { encoding: 'utf8' }).trimEnd();
      const sha = createHash('sha256').update(body).digest('hex');
      return `${control}\nFilename: ./${file.split('/').pop() ?? ''}\nSize: ${body.length}\nSHA256: ${sha}\n`;
    })
    .join('\n');
}

/** A shell command that writes `content` to `path` on the far side (base64: binary-safe, small files only). */
export function writeRemote(path: string, content: Buffer | string): string {
  return `printf '%s' '${Buffer.from(content).toString('base64')}' | base64 -d > '${path}'`;
}
