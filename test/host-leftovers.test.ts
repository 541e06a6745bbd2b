// The suite's leftover check (scripts/host-leftovers.sh, run by scripts/test.sh
// around the tests): what appears under the driver's host directories during
// the run and is still there after it is reported, which fails `npm test`;
// what existed before is not; while another test process is registered as a
// user of those directories the check is skipped, saying so.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoPath } from './helpers/cli.js';

/** Snapshot, then `during` (a bash command), then what host_paths_left prints, with the roots under `root`. */
function leftAfter(root: string, during: string): { stdout: string; stderr: string } {
  const script = `. ${repoPath('scripts', 'host-leftovers.sh')}; before=$(host_paths_snapshot); ${during}; host_paths_left "$before"`;
  const env = {
    ...process.env,
    KUBEMIX_TEST_HOST_PATHS: `${join(root, 'var-lib-kubemix')} ${join(root, 'images-kubemix')}`,
    KUBEMIX_TEST_HOST_REGISTRY: join(root, 'registry'),
  };
  const r = spawnSync('bash', ['-c', script], { cwd: root, encoding: 'utf8', env });
  assert.equal(r.status, 0, r.stderr);
  return { stdout: r.stdout, stderr: r.stderr };
}

test('a directory a test made under the host paths and left is reported; one that existed before is not', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-leftovers-'));
  try {
    assert.equal(leftAfter(root, 'mkdir -p var-lib-kubemix/libvirt/x; rm -r var-lib-kubemix').stdout, '');
    assert.equal(
      leftAfter(root, 'mkdir -p var-lib-kubemix/libvirt').stdout,
      `${join(root, 'var-lib-kubemix')}\n${join(root, 'var-lib-kubemix', 'libvirt')}\n`,
    );
    // var-lib-kubemix/libvirt is there now, before the next run: only what is new counts.
    assert.equal(leftAfter(root, 'true').stdout, '');
    assert.equal(
      leftAfter(root, 'mkdir -p images-kubemix/c').stdout,
      `${join(root, 'images-kubemix')}\n${join(root, 'images-kubemix', 'c')}\n`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('while another live test process is registered, the check is skipped and says so', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-leftovers-'));
  try {
    mkdirSync(join(root, 'registry'));
    writeFileSync(join(root, 'registry', `${process.pid}-1`), '');
    const r = leftAfter(root, 'mkdir -p var-lib-kubemix/libvirt');
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`pid ${process.pid}\\) still uses .*: check skipped`));
    rmSync(join(root, 'registry', `${process.pid}-1`));
    writeFileSync(join(root, 'registry', '999999999-1'), ''); // no such process: a dead tracker does not count
    assert.notEqual(leftAfter(root, 'mkdir -p var-lib-kubemix/other').stdout, '');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
