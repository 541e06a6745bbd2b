// YAML scalars in the yaml library's own quoting: single-quoted when that
// style can hold the value, double-quoted with escapes otherwise. One line
// always (lineWidth 0: no folding).
import { Scalar, stringify } from 'yaml';
import { assertEncodable } from './errors.js';

// Single-quoted YAML folds line breaks and cannot escape controls: use double quotes then.
const NEEDS_DOUBLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

export function yamlString(value: string): string {
  assertEncodable('yaml', value);
  // Without a control or line break, the library's single-quoted form is the value between quotes with
  // each quote doubled (YAML 1.2 §7.3.2; no folding at lineWidth 0): written here directly, since the
  // library's stringify costs ~50 µs a value and a large plan quotes hundreds of thousands.
  // test/escape/yaml.test.ts holds the two equal.
  if (!NEEDS_DOUBLE.test(value)) return `'${value.replaceAll("'", "''")}'`;
  return yamlStringByLibrary(value);
}

/** The quoting the yaml library writes for `value` (the reference the direct form above must equal). */
export function yamlStringByLibrary(value: string): string {
  const node = new Scalar(value);
  node.type = NEEDS_DOUBLE.test(value) ? Scalar.QUOTE_DOUBLE : Scalar.QUOTE_SINGLE;
  return stringify(node, {
    lineWidth: 0,
    minContentWidth: 0,
    doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER,
  }).replace(/\n$/, '');
}
