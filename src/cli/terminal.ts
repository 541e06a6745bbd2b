// What kubemix prints to a terminal never carries a control sequence that
// came from its input: a host name, file name or manifest value holding ESC
// could otherwise move the cursor, erase a line and draw a fake result
// (ECMA-48 control functions: C0, DEL, C1 — 0x9B is CSI on its own), and the
// Unicode bidirectional controls can reorder what the reader sees
// (CVE-2021-42574, "Trojan Source").
//
// Escapes are written as `\uXXXX`, which JSON (RFC 8259 §7) and YAML
// double-quoted scalars read back as the same character, so a JSON document
// that passes through stays the same JSON.
import type { CliIo } from './io.js';

const BIDI = '\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029';
/** Every control character except newline, tab and CR (handled apart), plus the bidi controls. */
const LOOSE = new RegExp(`[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f${BIDI}]`, 'gu');
/** The same and newline and tab: for one value inside a line. */
const STRICT = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${BIDI}]`, 'gu');
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

function escapeChar(ch: string): string {
  return NAMED[ch] ?? `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/** Text for a terminal: lines and tabs kept, every other control character escaped. A CR before LF is kept. */
export function terminalText(text: string): string {
  return text.replace(/\r(?!\n)/g, '\\r').replace(LOOSE, escapeChar);
}

/** One value inside a line (a name, a path, a message): newlines and tabs escaped too. */
export function terminalValue(text: string): string {
  return text.replace(STRICT, escapeChar);
}

/** A copy of a value with every string in it made safe by terminalValue (for formatters outside cli/). */
export function terminalSafe<T>(value: T): T {
  if (typeof value === 'string') return terminalValue(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => terminalSafe(v)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, terminalSafe(v)])) as T;
  }
  return value;
}

/**
 * The streams every command writes to, escaping what they print. The
 * unescaped streams stay reachable as `raw`, for the colours and redraws
 * kubemix composes itself from values already passed through terminalValue.
 */
export function terminalIo(io: CliIo): CliIo {
  if (io.raw !== undefined) return io;
  return {
    ...io,
    stdout: (text) => io.stdout(terminalText(text)),
    stderr: (text) => io.stderr(terminalText(text)),
    raw: { stdout: io.stdout, stderr: io.stderr },
  };
}
