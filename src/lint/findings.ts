// A finding as users see it, and what a set of findings means: their order
// (deterministic: file, line, column, rule) and the exit code they produce.
import { ExitCode, type Severity } from '../errors.js';
import type { OsSource } from './image-os.js';
import type { ObjectId } from './objects.js';

export interface Finding {
  readonly rule: string;
  readonly severity: Severity;
  readonly file: string;
  /** 1-based; 0 when the finding is about a whole file (it could not be read). */
  readonly line: number;
  readonly column: number;
  readonly object?: ObjectId;
  readonly container?: string;
  readonly message: string;
  readonly hint?: string;
  /** Where the image OS this finding rests on came from. */
  readonly osSource?: OsSource;
}

export interface Summary {
  readonly errors: number;
  readonly warnings: number;
  readonly unparseable: number;
}

const INPUT_RULE_PREFIX = 'input/';

export function compareFindings(a: Finding, b: Finding): number {
  return (
    compareText(a.file, b.file) ||
    a.line - b.line ||
    a.column - b.column ||
    compareText(a.rule, b.rule) ||
    compareText(a.container ?? '', b.container ?? '') ||
    compareText(a.message, b.message)
  );
}

/** Code-unit order, not locale order: output must not depend on the machine's locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(compareFindings);
}

export function summarize(findings: readonly Finding[]): Summary {
  let errors = 0;
  let warnings = 0;
  const unparseable = new Set<string>();
  for (const f of findings) {
    if (f.severity === 'error') errors += 1;
    else warnings += 1;
    if (f.rule.startsWith(INPUT_RULE_PREFIX)) unparseable.add(f.file);
  }
  return { errors, warnings, unparseable: unparseable.size };
}

/** 2 when any input could not be read or parsed, else 1 for errors (and warnings with strict), else 0. */
export function exitCodeOf(findings: readonly Finding[], strict: boolean): ExitCode {
  if (findings.some((f) => f.rule.startsWith(INPUT_RULE_PREFIX))) return ExitCode.input;
  if (findings.some((f) => f.severity === 'error' || strict)) return ExitCode.findings;
  return ExitCode.ok;
}

export function unreadableFinding(file: string, message: string): Finding {
  return {
    rule: 'input/unreadable',
    severity: 'error',
    file,
    line: 0,
    column: 0,
    message,
    hint: 'check the path and its permissions',
  };
}

export function tooLargeFinding(file: string, bytes: number, limit: number): Finding {
  const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return {
    rule: 'input/too-large',
    severity: 'error',
    file,
    line: 0,
    column: 0,
    message: `${mib(bytes)}: lint reads inputs of up to ${mib(limit)}`,
    hint: 'split the file (one per chart, kind or namespace) and lint the directory',
  };
}
