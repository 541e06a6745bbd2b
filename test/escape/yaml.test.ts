// yamlString against the yaml library's parser: `k: <escaped>` is { k: value }.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocument } from 'yaml';
import { yamlString } from '../../src/util/escape/index.js';
import { yamlStringByLibrary } from '../../src/util/escape/yaml.js';
import { EDGE_CASES, arbitraryStrings, unencodable } from '../helpers/arbitrary-strings.js';
import { SEED, escapeAll } from './common.js';

test('yamlString: YAML reads every scalar back unchanged, one line, one key', () => {
  for (const c of escapeAll(yamlString, unencodable)) {
    assert.ok(!c.text.includes('\n'), c.text);
    const doc = parseDocument(`k: ${c.text}\nz: 1\n`);
    assert.deepEqual(doc.errors, [], c.text);
    assert.deepEqual(doc.toJS(), { k: c.value, z: 1 }, c.text);
  }
});

test("yamlString: the direct single-quoted form equals the yaml library's for every value it can hold", () => {
  const values = [
    ...arbitraryStrings(SEED + 1, 2000),
    ...EDGE_CASES,
    "it's",
    "''",
    '"',
    '--- a',
    '... b',
    '# c',
    ' lead',
    'trail ',
    'a: b',
    '',
    'x'.repeat(300),
    `${'word '.repeat(40)}end`,
  ];
  let direct = 0;
  for (const value of values) {
    if (unencodable(value)) continue;
    assert.equal(yamlString(value), yamlStringByLibrary(value), JSON.stringify(value));
    if (!/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(value)) direct += 1;
  }
  assert.ok(direct >= 200, `too few values took the direct path (${direct})`);
});
