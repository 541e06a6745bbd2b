// `kubemix … | head`: once the reader of stdout or stderr is gone, output is
// dropped; the command is not a crash (exit 4, crash log) but ends with its
// own exit code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { repoPath } from './helpers/cli.js';

function withClosedStream(
  argv: readonly string[],
  stream: 'stdout' | 'stderr',
): Promise<{ code: number | null; other: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [repoPath('bin', 'kubemix.js'), ...argv], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader goes away before the first byte: every write meets EPIPE.
    child[stream].destroy();
    let other = '';
    child[stream === 'stdout' ? 'stderr' : 'stdout'].on('data', (c: Buffer) => (other += c.toString()));
    child.once('close', (code) => resolve({ code, other }));
  });
}

test('a closed stdout: the plan is not a crash, exit 0', async () => {
  const r = await withClosedStream(['plan', repoPath('examples', 'k8s-libvirt-3-2-1.yaml')], 'stdout');
  assert.equal(r.code, 0, r.other);
  assert.doesNotMatch(r.other, /Crash log|Please report/);
});

test('a closed stderr: a spec error still exits 2, not 4', async () => {
  const r = await withClosedStream(
    ['validate', repoPath('test', 'spec-corpus', 'existing-mac-duplicate.yaml')],
    'stderr',
  );
  assert.equal(r.code, 2);
});
