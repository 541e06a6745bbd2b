// The spec text with a new `spec.kubernetes.version`, every comment, blank
// line and key order kept (the `yaml` library's Document API edits the one
// scalar in place). The version stays a quoted string: a plain `1.40` is a
// YAML float and would read back as 1.4. Pure: text in, text out.
import { isMap, isScalar, parseDocument, Scalar } from 'yaml';
import { InputError } from '../errors.js';

const PATH = ['spec', 'kubernetes', 'version'] as const;

export function withKubernetesVersion(text: string, version: string, file: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || !isMap(doc.contents))
    throw new InputError('spec.unwritable', `${file} is not a YAML mapping kubemix can edit`, {
      path: file,
      hint: 'fix the YAML, or change spec.kubernetes.version by hand',
    });
  const node = doc.getIn(PATH, true);
  if (isScalar(node)) {
    node.value = version;
    if (node.type !== Scalar.QUOTE_SINGLE) node.type = Scalar.QUOTE_DOUBLE;
  } else {
    const scalar = new Scalar(version);
    scalar.type = Scalar.QUOTE_DOUBLE;
    doc.setIn(PATH, scalar);
  }
  return doc.toString();
}
