// The test-host path tracker: a shared directory another live tracker still
// uses is not removed, even when empty (a concurrent test's check needs it),
// and the last user removes it even if it existed when that user started; the
// same for the parents of own directories another live tracker made.
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

test('a parent another tracker made is removed by whichever ends last, not only by the one that made it', () => {
  const root = mkdtempSync(join(tmpdir(), 'kubemix-host-paths-'));
  try {
    const defs = join(root, 'kubemix', 'libvirt');
    for (const aEndsFirst of [true, false]) {
      const a = trackHostPaths([join(defs, 'a')], []);
      mkdirSync(join(defs, 'a'), { recursive: true });
      // b starts when a's test has already made the shared parents of its own directory.
      const b = trackHostPaths([join(defs, 'b')], []);
      mkdirSync(join(defs, 'b'));
      const [first, last] = aEndsFirst ? [a, b] : [b, a];
      first.cleanup();
      assert.equal(existsSync(defs), true, 'the parent stays while the other test has its directory there');
      last.cleanup();
      assert.equal(existsSync(join(root, 'kubemix')), false, `no empty parent left (a ends first: ${aEndsFirst})`);
      assert.equal(existsSync(root), true, 'never what existed before');
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
