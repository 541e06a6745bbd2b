// XML 1.0 text and attribute values (W3C XML 1.0 §2.2, §2.4, §3.3.3). The
// five markup characters become entities; tab, line feed and carriage return
// become character references so neither end-of-line handling nor attribute
// value normalisation changes them. Other C0 controls, U+FFFE and U+FFFF are
// not XML characters at all, not even as references.
import { UnrepresentableError, assertEncodable } from './errors.js';

const NOT_XML_CHAR = /[\u0001-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/;
const ENTITY: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

export function xmlEscape(value: string): string {
  assertEncodable('xml', value);
  if (NOT_XML_CHAR.test(value))
    throw new UnrepresentableError(
      'xml',
      value,
      'XML 1.0 cannot hold control characters other than tab and line breaks',
    );
  return value.replace(/[&<>"'\t\n\r]/g, (c) => ENTITY[c] ?? c);
}
