// The error taxonomy. Every failure a user can cause or meet has a stable
// `code`, says *where* (spec path, file:line, host, task id) and, when we know
// one, what to do (`hint`). The CLI's single handler maps `exit` to the
// process exit code; nothing else decides exit codes.

/** Documented exit codes (docs/commands.md "Exit codes"). With several inputs the highest wins. */
export const ExitCode = {
  ok: 0,
  /** Checks found problems: lint findings, failed verification, incomplete status. */
  findings: 1,
  /** Invalid input: spec, inventory, manifest, flags. */
  input: 2,
  /** A step failed on a host, including a refused host key. */
  host: 3,
  /** A bug in kubemix. */
  internal: 4,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type Severity = 'error' | 'warning';

/** One problem found in an input, reported with every other one. */
export interface Diagnostic {
  readonly code: string;
  readonly severity: Severity;
  /** Where: a spec path like `spec.nodes.workers[0].os`, or `file:line:col`. */
  readonly path: string;
  readonly message: string;
  readonly hint?: string;
  /** `file:line:col` of the offending value, when the input was a file. */
  readonly location?: string;
}

export interface ErrorDetails {
  readonly path?: string;
  readonly hint?: string;
  readonly cause?: unknown;
  /**
   * The command's own JSON document (a status or check report) when it fails
   * *because of* what that report says: printed as the one `--json`
   * document instead of the generic error document.
   */
  readonly report?: unknown;
}

export class KubemixError extends Error {
  readonly code: string;
  readonly exit: ExitCode;
  readonly path: string | undefined;
  readonly hint: string | undefined;
  readonly report: unknown;

  constructor(code: string, exit: ExitCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.exit = exit;
    this.path = details.path;
    this.hint = details.hint;
    this.report = details.report;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      ...(this.path === undefined ? {} : { path: this.path }),
      ...(this.hint === undefined ? {} : { hint: this.hint }),
    };
  }
}

/** Bad spec, inventory, manifest or flag (exit 2). */
export class InputError extends KubemixError {
  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(code, ExitCode.input, message, details);
  }
}

/**
 * A spec (or other document) that failed validation. Holds *all* the errors
 * and warnings found, not only the first.
 */
export class InvalidSpecError extends InputError {
  readonly diagnostics: readonly Diagnostic[];
  readonly source: string;

  constructor(source: string, diagnostics: readonly Diagnostic[]) {
    const errors = diagnostics.filter((d) => d.severity === 'error');
    super('spec.invalid', `${source}: ${errors.length} error${errors.length === 1 ? '' : 's'} in the spec`, {
      path: source,
      hint: 'fix the fields named above; `kubemix validate` lists them all',
    });
    this.diagnostics = diagnostics;
    this.source = source;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), diagnostics: this.diagnostics };
  }
}

/** A step failed on a host (exit 3). */
export class HostError extends KubemixError {
  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(code, ExitCode.host, message, details);
  }
}

/** The run was interrupted (exit 130). */
export class InterruptedError extends KubemixError {
  constructor(message = 'interrupted', details: ErrorDetails = {}) {
    super('interrupted', ExitCode.interrupted, message, details);
  }
}

/** Checks ran and found problems (exit 1); the findings were already printed. */
export class FindingsError extends KubemixError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('findings', ExitCode.findings, message, details);
  }
}

export function isKubemixError(value: unknown): value is KubemixError {
  return value instanceof KubemixError;
}
