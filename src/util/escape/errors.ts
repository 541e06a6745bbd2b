// The one error every escaper throws when its format cannot hold a value at
// all (a NUL byte, a lone UTF-16 surrogate, a line break in a one-line
// format). The spec schema rejects such values first, with their spec path;
// reaching this error means a value bypassed that check.
import { InputError } from '../../errors.js';

export type EscapeFormat = 'sh' | 'systemd' | 'toml' | 'powershell' | 'ini' | 'xml' | 'yaml';

export class UnrepresentableError extends InputError {
  readonly format: EscapeFormat;

  constructor(format: EscapeFormat, value: string, why: string) {
    super('escape.unrepresentable', `${JSON.stringify(value)} cannot be written as a ${format} value: ${why}`, {
      hint: 'remove control characters and line breaks from the spec value',
    });
    this.format = format;
  }
}

// Lone surrogates cannot be encoded as UTF-8 (they would become U+FFFD), so
// no file kubemix writes can carry them unchanged.
const LONE_SURROGATE = /\p{Cs}/u;

/** Throws unless `value` is text every output format can at least encode: no NUL, no lone surrogate. */
export function assertEncodable(format: EscapeFormat, value: string): void {
  if (value.includes('\0')) throw new UnrepresentableError(format, value, 'it holds a NUL character');
  if (LONE_SURROGATE.test(value)) throw new UnrepresentableError(format, value, 'it holds a lone UTF-16 surrogate');
}

/** `\uXXXX` for one UTF-16 unit (callers pass units below U+10000). */
export function hex4(c: string): string {
  return c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
}
