import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, writeJsonPretty } from './json.js';

/** The definition canonicalJson must keep: JSON.stringify of a key-sorted copy. */
function reference(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v === null || typeof v !== 'object') return v;
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined);
    return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, sort(x)]));
  };
  return JSON.stringify(sort(value));
}

test('canonicalJson equals JSON.stringify of a key-sorted copy', () => {
  const samples: unknown[] = [
    { b: 1, a: [3, { d: 'x', c: null }], é: 'q"\\\n\u2028', z: undefined, B: true },
    [undefined, 1.5, -0, 1e21, '', { '': [] }],
    'plain',
    42,
    null,
    { nested: { deeper: { keys: ['y', 'x'], Z: {}, a: [[]] } } },
    [{ b: { y: 1, x: [{ q: 2, p: undefined }] }, a: 0 }, { c: [1, { z: 1, a: 2 }] }, [{ b: 1, a: 2 }]],
    // Keys objects inherit: an item naming one cannot be written with a property list.
    [{ toString: 'x', b: { a: 1 } }, JSON.parse('{"__proto__":{"b":1,"a":2},"a":[{"z":0,"y":1}]}'), { a: { b: 1 } }],
  ];
  for (const sample of samples) assert.equal(canonicalJson(sample), reference(sample));
});

test('writeJsonPretty writes exactly JSON.stringify(value, null, indent), in pieces', () => {
  const samples: unknown[] = [
    { b: 1, a: [3, { d: 'x', c: null }], é: 'q"\\\n\u2028', z: undefined, f: () => 1, B: true },
    [undefined, 1.5, -0, 1e21, NaN, '', { '': [] }, {}, [[]], { only: undefined }],
    'plain',
    42,
    null,
    [],
    {},
    { nested: { deeper: { keys: ['y', 'x'], Z: {}, a: [[], [1, [2]]] } } },
    [{ s: 'a\nb', t: [{ u: 'c"\n' }, [1, []]], v: {} }, [[{ w: [] }]], 'x'],
  ];
  for (const sample of samples)
    for (const indent of [0, 1, 2]) {
      const parts: string[] = [];
      writeJsonPretty(sample, indent, (s) => parts.push(s));
      assert.equal(parts.join(''), JSON.stringify(sample, null, indent), `${JSON.stringify(sample)} indent ${indent}`);
    }
});

/** Arrays longer than one piece (32 items), with items of every kind, nested at several depths. */
function longArrays(): unknown[] {
  const items = Array.from(
    { length: 77 },
    (_, i) =>
      [
        { id: `t${i}`, after: [`a${i}`, 'b'], check: null, apply: { script: `echo ${i}\n"q"`, shell: 'sh' }, e: [] },
        `s${i}\n`,
        i,
        null,
        undefined,
        [i, [i], {}],
        { toString: 'own', n: { b: i, a: [] } },
      ][i % 7],
  );
  return [items, { tasks: items, deeper: { still: [items, []] } }, [[items]]];
}

test('writeJsonPretty and canonicalJson hold their definitions past one piece of items, at every depth', () => {
  for (const sample of longArrays()) {
    assert.equal(canonicalJson(sample), reference(sample));
    for (const indent of [0, 1, 2, 4]) {
      const parts: string[] = [];
      writeJsonPretty(sample, indent, (s) => parts.push(s));
      assert.equal(parts.join(''), JSON.stringify(sample, null, indent), `indent ${indent}`);
    }
  }
});
