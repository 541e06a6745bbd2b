// Values on an Ansible INI inventory host line. Ansible splits the line with
// Python's shlex (posix, comments on) and then runs ast.literal_eval on each
// value (ansible/plugins/inventory/ini.py, _parse_host_definition and
// _parse_value): `1.5` would become a float and `a,b` stays text but `1,2` a
// tuple. A value is written bare only when shlex keeps it whole and
// literal_eval cannot read it as anything; else it is a Python string
// literal inside shlex double quotes, which both layers undo exactly.
import { UnrepresentableError, assertEncodable, hex4 } from './errors.js';

const BARE = /^[A-Za-z0-9._~/:@%+,-]+$/;

/** True when Python's literal_eval raises on the text, so Ansible keeps it as a string. */
function literalEvalFails(text: string): boolean {
  if (/^(True|False|None)\b/.test(text)) return false;
  if (/^[A-Za-z_/~]/.test(text)) return true;
  // Digit-led: an IPv4-like run of dots, or a colon (never valid in a Python expression here).
  return !text.includes(',') && (/^[0-9]+(\.[0-9]+){2,}$/.test(text) || (text.includes(':') && /^[0-9]/.test(text)));
}

// Python's str.splitlines() breaks lines on these; the inventory is read with it.
const PY_ESCAPE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\']/g;

function pythonLiteral(text: string): string {
  return `'${text.replace(PY_ESCAPE, (c) => (c === '\\' || c === "'" ? `\\${c}` : `\\u${hex4(c)}`))}'`;
}

/** One `key=value` value for an INI inventory host line. */
export function iniValue(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value))
      throw new UnrepresentableError('ini', String(value), 'only whole numbers are written');
    return String(value);
  }
  assertEncodable('ini', value);
  // Ansible templates variables when it uses them: Jinja markers would run there.
  if (/\{[{%#]/.test(value))
    throw new UnrepresentableError('ini', value, 'Ansible would evaluate "{{", "{%" or "{#" as a template');
  if (BARE.test(value) && literalEvalFails(value)) return value;
  return `"${pythonLiteral(value).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
