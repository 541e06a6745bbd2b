// The sh upload script run for real under the session's umask 077: the file
// gets exactly its planned mode, the directories it needs are made 0755 so
// services running as other users (named) can reach what is inside.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uploadScript } from './scripts.js';

describe('sh upload script', () => {
  it('makes missing directories 0755 and the file its own mode, whatever the session umask', () => {
    const root = mkdtempSync(join(tmpdir(), 'kubemix-upload-'));
    try {
      const dest = join(root, 'etc', 'bind', 'kubemix', 'db.zone');
      const r = spawnSync('sh', ['-c', `umask 077\n${uploadScript('sh', dest, '0644', '')}`], {
        input: 'zone data\n',
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(readFileSync(dest, 'utf8'), 'zone data\n');
      assert.equal(statSync(dest).mode & 0o777, 0o644);
      for (const dir of ['etc', 'etc/bind', 'etc/bind/kubemix'])
        assert.equal(statSync(join(root, dir)).mode & 0o777, 0o755, dir);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
