import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExitCode, InvalidSpecError, isKubemixError } from '../errors.js';
import type { CliIo } from './io.js';
import { formatDiagnostic } from './output.js';
import { terminalValue } from './terminal.js';
import { VERSION } from '../version.js';

/** Print a failure the way the user asked (text or one JSON document) and return its exit code. */
export function reportFailure(error: unknown, argv: readonly string[], io: CliIo): number {
  const json = argv.includes('--json');
  if (!isKubemixError(error)) {
    const logPath = writeCrashLog(error);
    const payload = { code: 'internal', message: 'internal error', crashLog: logPath };
    if (json) io.stdout(`${JSON.stringify({ ok: false, error: payload }, null, 2)}\n`);
    io.stderr(
      `kubemix: internal error. Crash log: ${logPath}\nPlease report this at the kubemix issue tracker with the crash log.\n`,
    );
    return ExitCode.internal;
  }
  if (json) {
    const body =
      error.report ??
      (error instanceof InvalidSpecError ? invalidSpecDocument(error) : { ok: false, error: error.toJSON() });
    io.stdout(`${JSON.stringify(body, null, 2)}\n`);
  }
  if (error instanceof InvalidSpecError) {
    for (const d of error.diagnostics) io.stderr(formatDiagnostic(d));
  }
  const where =
    error.path !== undefined && !error.message.startsWith(error.path) ? `${terminalValue(error.path)}: ` : '';
  io.stderr(`kubemix: ${where}${error.message} [${error.code}]\n`);
  if (error.hint !== undefined) io.stderr(`  hint: ${error.hint}\n`);
  if (error.exit === ExitCode.interrupted) io.stderr('  re-run the same command to resume.\n');
  return error.exit;
}

function invalidSpecDocument(error: InvalidSpecError): Record<string, unknown> {
  return {
    ok: false,
    errors: error.diagnostics.filter((d) => d.severity === 'error'),
    warnings: error.diagnostics.filter((d) => d.severity === 'warning'),
    error: { code: error.code, message: error.message },
  };
}

/** Write the details of an unexpected failure where the user can attach them to a report. */
export function writeCrashLog(error: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-crash-'));
  const file = join(dir, 'crash.log');
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  const body = [
    `kubemix ${VERSION}`,
    `node ${process.version} ${process.platform}/${process.arch}`,
    `argv: ${redactArgv(process.argv.slice(2)).join(' ')}`,
    '',
    detail,
    '',
  ].join('\n');
  writeFileSync(file, body, { mode: 0o600 });
  return file;
}

const SECRET_FLAG = /^--?[\w-]*(token|password|secret|key)[\w-]*$/i;

/**
 * The value of a flag that may carry a secret (`--tls-key FILE`,
 * `--token=…`) is not copied into crash logs; the flags themselves and
 * everything else are.
 */
export function redactArgv(argv: readonly string[]): string[] {
  return argv.map((arg, i) => {
    const eq = arg.indexOf('=');
    if (arg.startsWith('-') && eq > 0 && SECRET_FLAG.test(arg.slice(0, eq))) return `${arg.slice(0, eq)}=<redacted>`;
    const previous = argv[i - 1] ?? '';
    const takesValue = SECRET_FLAG.test(previous) && !previous.startsWith('--no-') && !previous.includes('=');
    return takesValue && !arg.startsWith('--') ? '<redacted>' : arg;
  });
}
