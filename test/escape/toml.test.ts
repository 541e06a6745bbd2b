// TOML strings against smol-toml: `k = <escaped>` parses to exactly { k: value }.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'smol-toml';
import { tomlBasicString, tomlString } from '../../src/util/escape/index.js';
import { unencodable } from '../helpers/arbitrary-strings.js';
import { escapeAll } from './common.js';

for (const [name, escape] of [
  ['tomlString', tomlString],
  ['tomlBasicString', tomlBasicString],
] as const) {
  test(`${name}: a TOML parser reads every value back unchanged, as the only key`, () => {
    for (const c of escapeAll(escape, unencodable)) {
      const doc = `k = ${c.text}\n[t]\nx = 1\n`;
      assert.deepEqual(JSON.parse(JSON.stringify(parse(doc))), { k: c.value, t: { x: 1 } }, doc);
    }
  });
}

test('tomlString keeps a literal string where TOML allows one (Windows paths stay readable)', () => {
  assert.equal(tomlString('C:\\k\\containerd'), "'C:\\k\\containerd'");
  assert.equal(tomlString("it's"), '"it\'s"');
});
