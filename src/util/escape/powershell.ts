// PowerShell single-quoted (verbatim) strings. The tokenizer treats the
// ASCII apostrophe and U+2018–U+201B alike as single quotes (PowerShell
// language spec §2.3.5.2, single-quote-character), and a doubled quote of
// any of them is one literal character. So every one of the five is doubled.
import { assertEncodable } from './errors.js';

const PS_SINGLE_QUOTES = /['\u2018\u2019\u201a\u201b]/g;

export function psQuote(text: string): string {
  assertEncodable('powershell', text);
  return `'${text.replace(PS_SINGLE_QUOTES, (c) => c + c)}'`;
}

/** A PowerShell array literal of single-quoted strings. */
export function psList(values: readonly string[]): string {
  return `@(${values.map(psQuote).join(', ')})`;
}
