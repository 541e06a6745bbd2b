import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oncePer } from './memo.js';

test('oncePer makes a value once per owner and key', () => {
  let calls = 0;
  const make = (v: string) => () => ((calls += 1), v);
  const [a, b] = [{}, {}];
  assert.equal(oncePer(a, 'k', make('a1')), 'a1');
  assert.equal(oncePer(a, 'k', make('a2')), 'a1');
  assert.equal(oncePer(a, 'j', make('a3')), 'a3');
  assert.equal(oncePer(b, 'k', make('b1')), 'b1');
  assert.equal(calls, 3);
  // undefined is a value too: not made again.
  assert.equal(oncePer(a, 'u', make(undefined as unknown as string)), undefined);
  assert.equal(oncePer(a, 'u', make('no')), undefined);
  assert.equal(calls, 4);
});
