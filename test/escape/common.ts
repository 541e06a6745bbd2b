// Shared by the escaper property tests: run an escaper over arbitrary
// strings, keep what it wrote, and check that every refusal is the typed
// error and happened for a reason the format really has.
import assert from 'node:assert/strict';
import { UnrepresentableError } from '../../src/util/escape/index.js';
import { arbitraryStrings } from '../helpers/arbitrary-strings.js';

export const SEED = 20260524;

export interface Escaped {
  readonly value: string;
  readonly text: string;
}

/**
 * Escapes 400 seeded arbitrary strings (and the edge cases). `mustRefuse`
 * says which values the format cannot hold; the escaper must refuse exactly
 * those, with UnrepresentableError, and escape every other one.
 */
export function escapeAll(escape: (v: string) => string, mustRefuse: (v: string) => boolean, count = 400): Escaped[] {
  const out: Escaped[] = [];
  for (const value of arbitraryStrings(SEED, count)) {
    let text: string | undefined;
    try {
      text = escape(value);
    } catch (e) {
      assert.ok(e instanceof UnrepresentableError, `${JSON.stringify(value)}: ${String(e)}`);
      assert.ok(mustRefuse(value), `refused a value the format can hold: ${JSON.stringify(value)}`);
      continue;
    }
    assert.ok(!mustRefuse(value), `wrote a value the format cannot hold: ${JSON.stringify(value)} as ${text}`);
    out.push({ value, text });
  }
  assert.ok(out.length >= 60, `too few values escaped (${out.length}) for the test to mean anything`);
  return out;
}
