// YAML scalars through the yaml library's own stringifier: single-quoted
// when that style can hold the value, double-quoted with escapes otherwise.
// One line always (lineWidth 0: no folding).
import { Scalar, stringify } from 'yaml';
import { assertEncodable } from './errors.js';

export function yamlString(value: string): string {
  assertEncodable('yaml', value);
  // Single-quoted YAML folds line breaks and cannot escape controls: use double quotes then.
  const type = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/.test(value) ? Scalar.QUOTE_DOUBLE : Scalar.QUOTE_SINGLE;
  const node = new Scalar(value);
  node.type = type;
  return stringify(node, {
    lineWidth: 0,
    minContentWidth: 0,
    doubleQuotedMinMultiLineLength: Number.MAX_SAFE_INTEGER,
  }).replace(/\n$/, '');
}
