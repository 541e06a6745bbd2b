// systemd unit settings (systemd.syntax(7), systemd.exec(5) Environment=):
// a double-quoted word is unquoted with C-style escapes, and `%` starts a
// specifier everywhere, so `%%` is one `%`. A unit file is line-oriented and
// systemd does not promise control characters survive, so none are allowed.
import { UnrepresentableError, assertEncodable } from './errors.js';

// C0 controls, DEL and the C1 range; a unit file is read line by line.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Unicode non-characters: systemd drops an assignment holding one as "not UTF-8 clean" (unichar_is_valid).
const NONCHARACTER =
  /[\ufdd0-\ufdef\ufffe\uffff]|[\ud83f\ud87f\ud8bf\ud8ff\ud93f\ud97f\ud9bf\ud9ff\uda3f\uda7f\udabf\udaff\udb3f\udb7f\udbbf\udbff][\udffe\udfff]/;

/** One double-quoted systemd word holding `text`, e.g. for `Environment="K=V"`. */
export function systemdQuote(text: string): string {
  assertEncodable('systemd', text);
  if (CONTROL.test(text))
    throw new UnrepresentableError(
      'systemd',
      text,
      'a unit file setting cannot hold control characters or line breaks',
    );
  if (NONCHARACTER.test(text))
    throw new UnrepresentableError('systemd', text, 'systemd refuses Unicode non-characters');
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replaceAll('%', '%%')}"`;
}

/** `Environment="NAME=value"`; NAME must be a shell-style variable name. */
export function systemdEnvironment(name: string, value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
    throw new UnrepresentableError('systemd', name, 'not an environment variable name');
  return `Environment=${systemdQuote(`${name}=${value}`)}`;
}
