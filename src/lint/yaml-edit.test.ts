import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMap, isSeq, parseDocument } from 'yaml';
import { appendItem, applyInsertions, detectStyle, insertEntry } from './yaml-edit.js';

function edit(text: string, f: (doc: ReturnType<typeof parseDocument>) => ReturnType<typeof insertEntry>): string {
  const ins = f(parseDocument(text));
  assert.ok(ins !== undefined);
  return applyInsertions(text, [ins]);
}

test('style detection: indentation unit and sequence indentation', () => {
  assert.deepEqual(detectStyle('a:\n  b:\n  - x\n', false), { unit: 2, indentSeq: false, json: false });
  assert.deepEqual(detectStyle('a:\n    b:\n        - x\n', false), { unit: 4, indentSeq: true, json: false });
});

test('a new map entry goes after the last one, at its indentation, comments untouched', () => {
  const text = 'spec:\n  a: 1 # one\n  b:\n    - x\n\n# end\n';
  const out = edit(text, (doc) => {
    const spec = doc.get('spec', true);
    assert.ok(isMap(spec));
    return insertEntry(text, spec, 'os', { name: 'linux' }, detectStyle(text, false));
  });
  assert.equal(out, 'spec:\n  a: 1 # one\n  b:\n    - x\n  os:\n    name: linux\n\n# end\n');
});

test('flow collections get flow entries; YAML 1.1 words are quoted', () => {
  const text = 'spec: {a: 1}\nlist: []\n';
  const style = detectStyle(text, false);
  const map = edit(text, (doc) => {
    const spec = doc.get('spec', true);
    assert.ok(isMap(spec));
    return insertEntry(text, spec, 'flag', 'yes', style);
  });
  assert.equal(map, 'spec: {a: 1, flag: "yes"}\nlist: []\n');
  const seq = edit(text, (doc) => {
    const list = doc.get('list', true);
    assert.ok(isSeq(list));
    return appendItem(text, list, { key: 'os' }, style);
  });
  assert.equal(seq, 'spec: {a: 1}\nlist: [{key: os}]\n');
});

test('a block sequence item keeps the dash column of its siblings', () => {
  const text = 'tolerations:\n- key: a\n  operator: Exists\n';
  const out = edit(text, (doc) => {
    const seq = doc.get('tolerations', true);
    assert.ok(isSeq(seq));
    return appendItem(text, seq, { key: 'os', operator: 'Exists' }, detectStyle(text, false));
  });
  assert.equal(out, 'tolerations:\n- key: a\n  operator: Exists\n- key: os\n  operator: Exists\n');
});

test('a file without a final newline still gets whole lines', () => {
  const text = 'spec:\n  a: 1';
  const out = edit(text, (doc) => {
    const spec = doc.get('spec', true);
    assert.ok(isMap(spec));
    return insertEntry(text, spec, 'b', '2', detectStyle(text, false));
  });
  assert.equal(out, 'spec:\n  a: 1\n  b: "2"\n');
});
