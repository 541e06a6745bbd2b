// yamlString against the yaml library's parser: `k: <escaped>` is { k: value }.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocument } from 'yaml';
import { yamlString } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

test('yamlString: YAML reads every scalar back unchanged, one line, one key', () => {
  for (const c of escapeAll(yamlString, unencodable)) {
    assert.ok(!c.text.includes('\n'), c.text);
    const doc = parseDocument(`k: ${c.text}\nz: 1\n`);
    assert.deepEqual(doc.errors, [], c.text);
    assert.deepEqual(doc.toJS(), { k: c.value, z: 1 }, c.text);
  }
});
