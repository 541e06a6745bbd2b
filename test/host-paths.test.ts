// The test-host path tracker: a shared directory another live tracker still
// uses is not removed, even when empty (a concurrent test's check needs it),
// and the last user removes it even if it existed when that user started.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { trackHostPaths } from './harness/host-paths.js';

test('a shared directory stays while another tracker uses it; the last one removes it', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-host-paths-'));
  try {
    const cache = join(root, 'images', 'cache');
    const ownA = join(root, 'a');
    const ownB = join(root, 'b');
    const a = trackHostPaths([ownA], [cache]);
    mkdirSync(cache, { recursive: true });
    mkdirSync(ownA);
    // b starts when a's test has already made the cache.
    const b = trackHostPaths([ownB], [cache]);
    mkdirSync(ownB);
    a.cleanup();
    assert.equal(existsSync(ownA), false, 'own directory removed');
    assert.equal(existsSync(cache), true, 'the empty cache stays: b still uses it');
    b.cleanup();
    assert.equal(existsSync(ownB), false, 'own directory removed');
    assert.equal(existsSync(cache), false, 'the last user removes the empty cache a test made');
    assert.equal(existsSync(join(root, 'images')), false, 'and its empty parents');
    assert.equal(existsSync(root), true, 'never what existed before');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
