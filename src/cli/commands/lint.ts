// `kubemix lint`: flags in, report out. The checking lives in src/lint; this
// file reads inputs, writes fixes, prints the chosen format and turns the
// findings into the exit code (through the one error handler in main.ts).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { FindingsError, InputError } from '../../errors.js';
import type { CliIo } from '../io.js';
import type { LintCluster } from '../../lint/cluster.js';
import { lintTargetFromSpec } from '../lint-target.js';
import { terminalSafe } from '../terminal.js';
import { lintSources } from '../../lint/engine.js';
import { exitCodeOf, sortFindings, summarize, type Finding } from '../../lint/findings.js';
import { fixSources, unifiedDiff } from '../../lint/fix.js';
import { jsonReport, rulesJson } from '../../lint/format/json.js';
import { sarifReport } from '../../lint/format/sarif.js';
import { formatRulesText, formatText } from '../../lint/format/text.js';
import type { ImageOsResolver } from '../../lint/image-os.js';
import { resolverFromFlags, withRegistryOptions } from '../registry-flags.js';
import { readInputs, type InputFile } from '../../lint/inputs.js';
import { RULES } from '../../lint/rules/index.js';

const FORMATS = ['text', 'json', 'sarif'] as const;
type Format = (typeof FORMATS)[number];

export interface LintFlags {
  readonly format: Format;
  readonly fix: boolean;
  readonly diff: boolean;
  readonly strict: boolean;
  readonly offline: boolean;
  readonly rules: boolean;
  /** The global --json: one JSON document on stdout, also on failure. */
  readonly json: boolean;
  readonly color: boolean;
}

export function registerLint(program: Command, io: CliIo): void {
  const command = program
    .command('lint')
    .description('check Kubernetes manifests for what would break in a mixed Linux + Windows cluster')
    .argument('[paths...]', 'manifest files, directories (searched recursively) or - for standard input')
    .option('--format <format>', 'text | json | sarif', 'text')
    .option('--fix', 'write the missing OS placement into the manifests')
    .option('--diff', 'with --fix: print a unified diff instead of writing the files')
    .option('--strict', 'warnings count as errors for the exit code')
    .option('--offline', 'image OS from the local cache and name heuristics only')
    .option('--rules', 'list every rule with its id, severity and why, then exit')
    .option(
      '--cluster <SPEC>',
      'cluster spec file or Kubeinit string: check placement against its Windows builds and RuntimeClasses; its mirrors are used for registry lookups',
    );
  withRegistryOptions(command).action(async (paths: string[], options: { cluster?: string }, cmd: Command) => {
    const opts = cmd.optsWithGlobals();
    const flags = parseFlags(opts);
    const target = options.cluster === undefined ? undefined : lintTargetFromSpec(options.cluster, io);
    // Each unreachable registry is said once; the run carries on with the cache and heuristics.
    const warned = new Set<string>();
    const resolver = flags.rules
      ? undefined
      : resolverFromFlags(opts, io, {
          offline: flags.offline,
          mirrors: target?.mirrors ?? {},
          warn: (message, error) => {
            const key = error.code === 'registry.not-found' ? message : error.message;
            if (!warned.has(key)) io.stderr(`warning: ${message}\n`);
            warned.add(key);
          },
        });
    await runLint(paths, flags, io, target?.cluster, resolver);
  });
}

function parseFlags(opts: Record<string, unknown>): LintFlags {
  const format = String(opts['format'] ?? 'text');
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new InputError('lint.format', `unknown --format ${format}`, { hint: `use one of ${FORMATS.join(', ')}` });
  }
  const flags: LintFlags = {
    format: opts['json'] === true ? 'json' : (format as Format),
    fix: opts['fix'] === true,
    diff: opts['diff'] === true,
    strict: opts['strict'] === true,
    offline: opts['offline'] === true,
    rules: opts['rules'] === true,
    json: opts['json'] === true,
    color: opts['color'] !== false,
  };
  if (opts['json'] === true && format === 'sarif')
    throw new InputError('lint.format', '--json and --format sarif contradict each other');
  if (flags.diff && !flags.fix)
    throw new InputError('lint.diff', '--diff needs --fix', { hint: 'kubemix lint --fix --diff PATH' });
  if (flags.diff && flags.format !== 'text') {
    throw new InputError(
      'lint.diff',
      '--diff prints a diff on stdout and cannot be combined with --format json or sarif',
    );
  }
  return flags;
}

/** The whole command; `cluster` comes from `--cluster SPEC`, `resolver` from the registry flags (default: heuristics). */
export async function runLint(
  paths: readonly string[],
  flags: LintFlags,
  io: CliIo,
  cluster?: LintCluster,
  resolver?: ImageOsResolver,
): Promise<void> {
  if (flags.rules) {
    printRules(flags, io);
    return;
  }
  if (paths.length === 0)
    throw new InputError('lint.paths', 'no manifests given', {
      hint: 'kubemix lint PATH… (a directory, a file, or - for standard input)',
    });
  if (flags.fix && !flags.diff && paths.includes('-')) {
    throw new InputError('lint.fix-stdin', '--fix cannot write back to standard input', {
      hint: 'use --fix --diff to see the fix as a diff',
    });
  }
  const inputs = await readInputs(paths, { cwd: io.cwd, readStdin: io.readStdin });
  const options = { ...(resolver === undefined ? {} : { resolver }), ...(cluster === undefined ? {} : { cluster }) };
  const files = flags.fix ? await applyFixes(inputs.files, options, flags, io) : inputs.files;
  const report = await lintSources(files, options);
  const findings = sortFindings([...inputs.unreadable, ...report.findings]);
  const meta = { files: files.length + inputs.unreadable.length, templates: report.templates, strict: flags.strict };
  const exit = exitCodeOf(findings, flags.strict);
  if (flags.json) {
    if (exit !== 0) throw failure(exit, findings, flags, jsonReport(findings, meta));
    io.stdout(`${JSON.stringify(jsonReport(findings, meta), null, 2)}\n`);
    return;
  }
  const out = flags.diff ? io.stderr : io.stdout;
  if (flags.format === 'json') out(`${JSON.stringify(jsonReport(findings, meta), null, 2)}\n`);
  else if (flags.format === 'sarif') out(`${JSON.stringify(sarifReport(findings, RULES), null, 2)}\n`);
  else {
    // The findings quote manifests (names, images, file names): escaped here, so only the formatter's colours stay raw.
    const raw = io.raw === undefined ? out : flags.diff ? io.raw.stderr : io.raw.stdout;
    raw(formatText(findings.map(terminalSafe), { color: flags.color && io.isTty && io.env['NO_COLOR'] === undefined }));
  }
  if (exit !== 0) throw failure(exit, findings, flags, undefined);
}

async function applyFixes(
  files: readonly InputFile[],
  options: Parameters<typeof fixSources>[1],
  flags: LintFlags,
  io: CliIo,
): Promise<InputFile[]> {
  const fixes = await fixSources(files, options);
  const byPath = new Map(fixes.map((f) => [f.path, f]));
  for (const fix of fixes) {
    if (fix.reformatted)
      io.stderr(`warning: ${fix.path}: could not insert in place; the file was re-serialised (check the diff)\n`);
    if (flags.diff) {
      io.stdout(unifiedDiff(fix));
      continue;
    }
    const target = files.find((f) => f.path === fix.path)?.absolute;
    if (target !== undefined) await writeFile(target, fix.after, 'utf8');
  }
  if (!flags.diff && !flags.json && fixes.length > 0) {
    const templates = fixes.reduce((n, f) => n + f.templates, 0);
    io.stderr(
      `fixed placement of ${templates} pod template${templates === 1 ? '' : 's'} in ${fixes.length} file${fixes.length === 1 ? '' : 's'}\n`,
    );
  }
  return files.map((f) => {
    const fix = byPath.get(f.path);
    return fix === undefined ? f : { ...f, text: fix.after };
  });
}

function printRules(flags: LintFlags, io: CliIo): void {
  if (flags.format === 'text') io.stdout(formatRulesText(RULES));
  else if (flags.format === 'json')
    io.stdout(`${JSON.stringify(flags.json ? { ok: true, rules: rulesJson(RULES) } : rulesJson(RULES), null, 2)}\n`);
  else io.stdout(`${JSON.stringify(sarifReport([], RULES), null, 2)}\n`);
}

/** Exit 1 or 2 through the one handler; with --json the report rides in the error document. */
function failure(
  exit: number,
  findings: readonly Finding[],
  flags: LintFlags,
  report: Record<string, unknown> | undefined,
): Error {
  const s = summarize(findings);
  const error =
    exit === 2
      ? new LintInputError(`${s.unparseable} input${s.unparseable === 1 ? '' : 's'} could not be read or parsed`)
      : new LintFindingsError(
          flags.strict && s.errors === 0
            ? `lint found ${s.warnings} warning${s.warnings === 1 ? '' : 's'} (--strict)`
            : `lint found ${s.errors} error${s.errors === 1 ? '' : 's'}`,
        );
  error.lintReport = report;
  return error;
}

class LintFindingsError extends FindingsError {
  lintReport: Record<string, unknown> | undefined;
  override toJSON(): Record<string, unknown> {
    return this.lintReport === undefined ? super.toJSON() : { ...super.toJSON(), report: this.lintReport };
  }
}

class LintInputError extends InputError {
  lintReport: Record<string, unknown> | undefined;
  constructor(message: string) {
    super('lint.unparseable', message, { hint: 'fix the inputs reported above; the other files were checked' });
  }
  override toJSON(): Record<string, unknown> {
    return this.lintReport === undefined ? super.toJSON() : { ...super.toJSON(), report: this.lintReport };
  }
}
