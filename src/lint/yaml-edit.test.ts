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

test('insertions at one offset go deepest first: an inner map that ends there keeps its new key', () => {
  // The pod spec ends with its nodeSelector: a new spec entry and a new
  // selector label both go after `disk: ssd`.
  const text = 'spec:\n  containers: []\n  nodeSelector:\n    disk: ssd\n';
  const doc = parseDocument(text);
  const spec = doc.get('spec', true);
  const selector = doc.getIn(['spec', 'nodeSelector'], true);
  assert.ok(isMap(spec) && isMap(selector));
  const style = detectStyle(text, false);
  const outer = insertEntry(text, spec, 'os', { name: 'linux' }, style);
  const inner = insertEntry(text, selector, 'kubernetes.io/os', 'linux', style);
  assert.ok(outer !== undefined && inner !== undefined);
  assert.equal(outer.offset, inner.offset);
  const out = applyInsertions(text, [outer, inner]);
  assert.equal(
    out,
    'spec:\n  containers: []\n  nodeSelector:\n    disk: ssd\n    kubernetes.io/os: linux\n  os:\n    name: linux\n',
  );
  assert.deepEqual(parseDocument(out).toJS(), {
    spec: { containers: [], nodeSelector: { disk: 'ssd', 'kubernetes.io/os': 'linux' }, os: { name: 'linux' } },
  });
});

test('a sequence item whose dash sits at its key column goes before a sibling entry at that offset', () => {
  const text = 'spec:\n  tolerations:\n  - key: a\n';
  const doc = parseDocument(text);
  const spec = doc.get('spec', true);
  const seq = doc.getIn(['spec', 'tolerations'], true);
  assert.ok(isMap(spec) && isSeq(seq));
  const style = detectStyle(text, false);
  const entry = insertEntry(text, spec, 'os', { name: 'windows' }, style);
  const item = appendItem(text, seq, { key: 'os' }, style);
  assert.ok(entry !== undefined && item !== undefined);
  const out = applyInsertions(text, [entry, item]);
  assert.deepEqual(parseDocument(out).toJS(), {
    spec: { tolerations: [{ key: 'a' }, { key: 'os' }], os: { name: 'windows' } },
  });
});

test('two insertions at the end of a file without a final newline: one newline, no blank line', () => {
  const text = 'spec:\n  nodeSelector:\n    disk: ssd';
  const doc = parseDocument(text);
  const spec = doc.get('spec', true);
  const selector = doc.getIn(['spec', 'nodeSelector'], true);
  assert.ok(isMap(spec) && isMap(selector));
  const style = detectStyle(text, false);
  const outer = insertEntry(text, spec, 'os', { name: 'linux' }, style);
  const inner = insertEntry(text, selector, 'kubernetes.io/os', 'linux', style);
  assert.ok(outer !== undefined && inner !== undefined);
  assert.equal(
    applyInsertions(text, [outer, inner]),
    'spec:\n  nodeSelector:\n    disk: ssd\n    kubernetes.io/os: linux\n  os:\n    name: linux\n',
  );
});
