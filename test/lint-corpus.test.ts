// Every manifest in test/lint-corpus/ with its exact expected findings in a
// sibling `<name>.expected.json`. An expected file may name the cluster the
// manifest is checked against (`cluster: {windows: [...], hasLinux}`).
// UPDATE_GOLDEN=1 rewrites the expected files from the current output: read
// the diff before committing it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { lintClusterFor } from '../src/lint/cluster.js';
import { lintSources } from '../src/lint/engine.js';
import { exitCodeOf } from '../src/lint/findings.js';
import { repoPath } from './helpers/cli.js';

const DIR = join(repoPath(), 'test', 'lint-corpus');
const EXPECTED = '.expected.json';

interface Expected {
  cluster?: { windows: string[]; hasLinux?: boolean };
  exitCode: number;
  findings: Record<string, unknown>[];
}

const manifests = readdirSync(DIR)
  .filter((f) => /\.(ya?ml|json)$/.test(f) && !f.endsWith(EXPECTED))
  .sort();

test('the corpus has at least 30 manifests', () => {
  assert.ok(manifests.length >= 30, `only ${manifests.length} manifests`);
});

for (const name of manifests) {
  test(`corpus: ${name}`, async () => {
    const expectedPath = join(DIR, name.replace(/\.(ya?ml|json)$/, EXPECTED));
    const previous: Partial<Expected> = existsSync(expectedPath)
      ? (JSON.parse(readFileSync(expectedPath, 'utf8')) as Expected)
      : {};
    const spec = previous.cluster;
    const cluster = spec === undefined ? undefined : lintClusterFor(spec.windows, { hasLinux: spec.hasLinux ?? true });
    const report = await lintSources(
      [{ path: name, text: readFileSync(join(DIR, name), 'utf8') }],
      cluster === undefined ? {} : { cluster },
    );
    for (const f of report.findings) assert.equal(f.file, name);
    const actual: Expected = {
      ...(spec === undefined ? {} : { cluster: spec }),
      exitCode: exitCodeOf(report.findings, false),
      findings: report.findings.map(({ file: _file, ...rest }) => rest),
    };
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(expectedPath, `${JSON.stringify(actual, null, 2)}\n`);
    assert.deepEqual(actual, previous);
  });
}
