// Golden files: compare against test/golden/…, or rewrite them with UPDATE_GOLDEN=1.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import assert from 'node:assert/strict';
import { repoPath } from './cli.js';

export function assertGolden(relative: string, actual: string): void {
  const file = repoPath('test', 'golden', relative);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  let expected: string;
  try {
    expected = readFileSync(file, 'utf8');
  } catch {
    assert.fail(`golden file test/golden/${relative} is missing: run UPDATE_GOLDEN=1 npm test and review it`);
  }
  assert.equal(
    actual,
    expected,
    `output differs from test/golden/${relative} (UPDATE_GOLDEN=1 rewrites it; review the diff)`,
  );
}
