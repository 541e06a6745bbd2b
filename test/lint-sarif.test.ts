// SARIF output validated against the SARIF 2.1.0 JSON schema (rtm.5, as
// shipped in the npm package @microsoft/jest-sarif, MIT; vendored in
// test/fixtures). The schema is JSON Schema draft-04, hence ajv-draft-04;
// one of its patterns (language tags) is not valid in unicode mode.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { lintClusterFor } from '../src/lint/cluster.js';
import { lintSources } from '../src/lint/engine.js';
import { unreadableFinding } from '../src/lint/findings.js';
import { sarifReport } from '../src/lint/format/sarif.js';
import { RULES } from '../src/lint/rules/index.js';
import { repoPath } from './helpers/cli.js';

const schema = JSON.parse(
  readFileSync(join(repoPath(), 'test', 'fixtures', 'sarif-2.1.0-rtm.5.json'), 'utf8'),
) as Record<string, unknown>;

function validator(): (data: unknown) => { ok: boolean; errors: string } {
  const ajv = new Ajv04.default({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  const validate = ajv.compile(schema);
  return (data) => ({ ok: validate(data), errors: ajv.errorsText(validate.errors) });
}

test('SARIF for the whole corpus is valid SARIF 2.1.0', async () => {
  const dir = join(repoPath(), 'test', 'lint-corpus');
  const names = [
    'helm-rendered.yaml',
    'windows-storage.yaml',
    'broken-indent.yaml',
    'cluster-build-mismatch.yaml',
    'list-kubectl-get.yaml',
  ];
  const report = await lintSources(
    names.map((n) => ({ path: `test/lint-corpus/${n}`, text: readFileSync(join(dir, n), 'utf8') })),
    { cluster: lintClusterFor(['windows-2022']) },
  );
  const findings = [
    ...report.findings,
    unreadableFinding('/abs/missing file.yaml', 'cannot read: ENOENT'),
    unreadableFinding('<stdin>', 'no stdin'),
  ];
  const log = sarifReport(findings, RULES);
  const result = validator()(log);
  assert.ok(result.ok, result.errors);
  const run = (
    log['runs'] as { results: { ruleIndex: number; ruleId: string }[]; tool: { driver: { rules: { id: string }[] } } }[]
  )[0];
  assert.ok(run !== undefined && run.results.length === findings.length);
  for (const r of run.results) assert.equal(run.tool.driver.rules[r.ruleIndex]?.id, r.ruleId);
});

test('the schema check is not vacuous: a broken log fails', () => {
  const bad = { version: '2.1.0', runs: [{ tool: { driver: {} }, results: [{ level: 'fatal' }] }] };
  assert.equal(validator()(bad).ok, false);
});
