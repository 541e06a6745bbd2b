import type { CliIo } from './io.js';
import type { Diagnostic } from '../errors.js';
import { terminalText, terminalValue } from './terminal.js';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];

export function isLogLevel(value: string): value is LogLevel {
  return (LEVELS as readonly string[]).includes(value);
}

/**
 * Data goes to stdout, diagnostics to stderr. In JSON mode exactly one JSON
 * document is printed on stdout (the command's result or the error).
 */
export class Output {
  readonly json: boolean;
  private readonly io: CliIo;
  private readonly level: LogLevel;
  private readonly color: boolean;

  constructor(io: CliIo, options: { json: boolean; level: LogLevel; color: boolean }) {
    this.io = io;
    this.json = options.json;
    this.level = options.level;
    this.color = options.color;
  }

  /** Human-readable data on stdout (ignored in JSON mode). */
  text(line: string): void {
    if (!this.json) this.io.stdout(line.endsWith('\n') ? line : `${line}\n`);
  }

  /** The single JSON document of a command run with --json. */
  document(value: unknown): void {
    this.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
  }

  log(level: LogLevel, message: string): void {
    if (LEVELS.indexOf(level) > LEVELS.indexOf(this.level)) return;
    const tag = level === 'info' ? '' : `${this.paint(level, level)}: `;
    this.stderrPainted(`${tag}${terminalText(message)}\n`);
  }

  diagnostic(d: Diagnostic): void {
    this.stderrPainted(formatDiagnostic(d, (text) => this.paint(d.severity === 'error' ? 'error' : 'warn', text)));
  }

  /** Text whose only control sequences are this class's colours: every input value in it is escaped already. */
  private stderrPainted(text: string): void {
    (this.io.raw?.stderr ?? this.io.stderr)(text);
  }

  private paint(level: LogLevel, text: string): string {
    if (!this.color) return text;
    const code = level === 'error' ? 31 : level === 'warn' ? 33 : 36;
    return `\u001b[${code}m${text}\u001b[0m`;
  }
}

/**
 * `error file:3:5 spec.cni.vni: message [code]` plus the hint on its own line.
 * Every field is escaped for the terminal (a value from the input may hold
 * control characters); a path that only repeats the location's file is left out.
 */
export function formatDiagnostic(d: Diagnostic, paint: (text: string) => string = (t) => t): string {
  const v = terminalValue;
  const where =
    d.location === undefined
      ? v(d.path)
      : d.location.startsWith(`${d.path}:`)
        ? v(d.location)
        : `${v(d.location)} ${v(d.path)}`;
  const hint = d.hint === undefined ? '' : `\n    hint: ${v(d.hint)}`;
  return `${paint(d.severity)} ${where}: ${v(d.message)} [${v(d.code)}]${hint}\n`;
}
