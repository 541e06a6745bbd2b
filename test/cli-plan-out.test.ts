// `kubemix plan SPEC --out DIR` replaces DIR; it must never replace the
// working directory, the spec file, or a directory it did not write. Run in a
// real git checkout: after a refusal the tree (.git included) is byte-identical.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hasStackTrace, repoPath, runCli, type CliResult } from './helpers/cli.js';
import { scratch } from './helpers/shapes.js';

const tmp = scratch('plan-out');
const repo = join(tmp.dir, 'checkout');
after(() => tmp.remove());

/** Every path under dir with the sha256 of its content (or its link target), sorted. */
function snapshot(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const rel = `${prefix}${name}`;
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out.push(`${rel} -> ${readlinkSync(path)}`);
    else if (st.isDirectory()) out.push(`${rel}/`, ...snapshot(path, `${rel}/`));
    else out.push(`${rel} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
  }
  return out;
}

function refused(r: CliResult, pattern: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, pattern);
  assert.match(r.stderr, /\[flags\.out\]/);
  assert.match(r.stderr, /--out/);
  assert.equal(hasStackTrace(r.stderr), false, r.stderr);
  assert.equal(r.stdout, '');
}

before(() => {
  mkdirSync(join(repo, 'src'), { recursive: true });
  copyFileSync(repoPath('examples', 'k8s-libvirt-1-1-1.yaml'), join(repo, 'spec.yaml'));
  writeFileSync(join(repo, 'src', 'main.ts'), 'export const answer = 42;\n');
  const git = (...args: string[]): void =>
    void execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: repo,
      stdio: 'ignore',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'sources');
});

describe('plan --out refuses to destroy what kubemix did not write', () => {
  it('--out . in a git checkout: exit 2, the checkout unchanged (also with --force)', async () => {
    const before = snapshot(repo);
    assert.ok(before.some((p) => p.startsWith('.git/')));
    refused(await runCli(['plan', 'spec.yaml', '--out', '.'], { cwd: repo }), /holds/);
    refused(await runCli(['plan', 'spec.yaml', '--out', '.', '--force'], { cwd: repo }), /holds/);
    refused(await runCli(['plan', 'spec.yaml', '--out', '..'], { cwd: repo }), /holds/);
    assert.deepEqual(snapshot(repo), before);
    assert.deepEqual(readdirSync(tmp.dir), ['checkout']);
  });

  it('--out spec.yaml (the spec itself) and --out of another file: exit 2, the file unchanged', async () => {
    const before = snapshot(repo);
    refused(await runCli(['plan', 'spec.yaml', '--out', 'spec.yaml'], { cwd: repo }), /spec\.yaml/);
    refused(await runCli(['plan', 'spec.yaml', '--out', 'src/main.ts', '--force'], { cwd: repo }), /is a file/);
    assert.deepEqual(snapshot(repo), before);
  });

  it('a non-empty directory kubemix did not write: exit 2 naming the marker; --force replaces it', async () => {
    const before = snapshot(repo);
    refused(await runCli(['plan', 'spec.yaml', '--out', 'src'], { cwd: repo }), /did not write \(no \.kubemix-plan/);
    assert.deepEqual(snapshot(repo), before);
    const other = join(tmp.dir, 'notes');
    mkdirSync(other);
    writeFileSync(join(other, 'todo.txt'), 'keep me\n');
    refused(await runCli(['plan', join(repo, 'spec.yaml'), '--out', other]), /not empty/);
    assert.equal(readFileSync(join(other, 'todo.txt'), 'utf8'), 'keep me\n');
    const forced = await runCli(['plan', join(repo, 'spec.yaml'), '--out', other, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(existsSync(join(other, 'todo.txt')), false);
    assert.equal(existsSync(join(other, 'plan.json')), true);
  });

  it('a symbolic link is refused, not followed', async () => {
    symlinkSync(join(repo, 'src'), join(tmp.dir, 'link'));
    refused(await runCli(['plan', join(repo, 'spec.yaml'), '--out', join(tmp.dir, 'link')]), /symbolic link/);
    assert.equal(readlinkSync(join(tmp.dir, 'link')), join(repo, 'src'));
    assert.equal(existsSync(join(repo, 'src', 'main.ts')), true);
  });

  it('a new, an empty and an earlier plan directory are written; every plan directory holds the marker', async () => {
    const dir = join(tmp.dir, 'plan');
    const first = await runCli(['plan', join(repo, 'spec.yaml'), '--out', dir]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(existsSync(join(dir, '.kubemix-plan')), true);
    const again = await runCli(['plan', join(repo, 'spec.yaml'), '--out', dir]);
    assert.equal(again.code, 0, again.stderr);
    const empty = join(tmp.dir, 'empty');
    mkdirSync(empty);
    assert.equal((await runCli(['plan', join(repo, 'spec.yaml'), '--out', empty])).code, 0);
    assert.ok(readdirSync(empty).includes('plan.json'));
    // A relative --out is relative to the working directory the CLI was given.
    const rel = await runCli(['plan', 'spec.yaml', '--out', 'build-plan'], { cwd: repo });
    assert.equal(rel.code, 0, rel.stderr);
    assert.equal(existsSync(join(repo, 'build-plan', '.kubemix-plan')), true);
  });
});
