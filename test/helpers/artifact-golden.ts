// Golden files: rendered artifacts compared byte for byte with
// test/golden/<shape>/<node>/<path on host>. UPDATE_GOLDEN=1 rewrites them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { RenderedArtifact } from '../../src/render/types.js';
import { REPO } from './shapes.js';

export function goldenDir(name: string): string {
  return join(REPO, 'test', 'golden', name);
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

export function assertArtifactGolden(name: string, artifacts: readonly RenderedArtifact[]): void {
  const dir = goldenDir(name);
  const want = new Map(artifacts.map((a) => [join(a.node, a.remotePath), a.content]));
  if (process.env.UPDATE_GOLDEN === '1') {
    for (const [path, content] of want) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
  }
  assert.deepEqual(
    listFiles(dir),
    [...want.keys()].sort(),
    `files under test/golden/${name} (UPDATE_GOLDEN=1 to rewrite)`,
  );
  for (const [path, content] of want) {
    assert.equal(
      content,
      readFileSync(join(dir, path), 'utf8'),
      `test/golden/${name}/${path} differs (UPDATE_GOLDEN=1 to rewrite)`,
    );
  }
}
