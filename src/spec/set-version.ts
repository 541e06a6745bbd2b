// The spec text with a new `spec.kubernetes.version`: the one scalar's bytes
// are replaced where they stand and every other byte is kept — a BOM, CRLF
// line ends, comments (U+2028 in them included), flow style, key order. The
// `yaml` library only finds the scalar (its source range); re-printing the
// document would normalise all of that. The version is written quoted: a
// plain `1.40` is a YAML float and would read back as 1.4. Pure: text in,
// text out.
import { isAlias, isMap, isScalar, parseDocument, Scalar } from 'yaml';
import { InputError } from '../errors.js';

const PATH = ['spec', 'kubernetes', 'version'] as const;

function unwritable(file: string, why: string, version: string): InputError {
  return new InputError('spec.unwritable', `${file}: ${why}`, {
    path: file,
    hint: `set spec.kubernetes.version to "${version}" by hand`,
  });
}

/** The new scalar's source, in the quoting the old one used (plain becomes double-quoted). */
function quoted(version: string, type: Scalar['type']): string {
  return type === Scalar.QUOTE_SINGLE ? `'${version}'` : `"${version}"`;
}

export function withKubernetesVersion(text: string, version: string, file: string): string {
  if (!/^\d+\.\d+(\.\d+)?$/.test(version)) throw unwritable(file, `"${version}" is not a version`, version);
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents))
    throw unwritable(file, 'is not a YAML mapping kubemix can edit', version);
  const node = doc.getIn(PATH, true);
  if (isAlias(node)) throw unwritable(file, 'spec.kubernetes.version is an alias (*name)', version);
  if (!isScalar(node)) {
    // No version written yet (the matrix default was used): the document gains the key. Only
    // here is the text re-printed, since there are no bytes of the scalar to replace.
    const scalar = new Scalar(version);
    scalar.type = Scalar.QUOTE_DOUBLE;
    doc.setIn(PATH, scalar);
    return doc.toString();
  }
  const [start, end] = node.range ?? [];
  const source = start === undefined || end === undefined ? '' : text.slice(start, end);
  const block = node.type === Scalar.BLOCK_FOLDED || node.type === Scalar.BLOCK_LITERAL;
  // The range must hold exactly the scalar as parsed, or the splice would cut elsewhere.
  if (block || start === undefined || end === undefined || !source.includes(String(node.value)))
    throw unwritable(file, 'spec.kubernetes.version is not written as one plain or quoted scalar', version);
  return `${text.slice(0, start)}${quoted(version, node.type)}${text.slice(end)}`;
}
