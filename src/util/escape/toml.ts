// TOML 1.0 strings. A literal string ('…') keeps backslashes as written
// (Windows paths read naturally) but cannot hold `'` or control characters;
// a basic string ("…") holds anything once `\`, `"` and the controls are
// escaped (toml.io/en/v1.0.0#string).
import { assertEncodable, hex4 } from './errors.js';

// TOML forbids U+0000–U+0008, U+000A–U+001F and U+007F unescaped in any string.
const TOML_CONTROL = /[\u0000-\u001f\u007f]/g;

/** A TOML basic string. */
export function tomlBasicString(text: string): string {
  assertEncodable('toml', text);
  const body = text.replace(/[\\"]/g, (c) => `\\${c}`).replace(TOML_CONTROL, (c) => `\\u${hex4(c)}`);
  return `"${body}"`;
}

/** A TOML literal string when the text allows one, else a basic string. */
export function tomlString(text: string): string {
  assertEncodable('toml', text);
  return text.includes("'") || /[\u0000-\u001f\u007f]/.test(text) ? tomlBasicString(text) : `'${text}'`;
}
