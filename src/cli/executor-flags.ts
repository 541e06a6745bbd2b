// The executor's flags, declared once for every command that runs a plan
// (up, down, add-node) and turned into applyPlan's options in one place.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import type { ApplyOptions } from '../exec/apply-plan.js';
import { inputFile, outputFile } from '../exec/local-paths.js';
import { parseStage } from '../exec/selection.js';
import type { CliIo } from './io.js';

export interface ExecutorFlags {
  readonly stateDir?: string;
  readonly knownHosts?: string;
  readonly trustNewHosts?: boolean;
  readonly concurrency?: string;
  readonly check?: boolean;
  readonly stopAfter?: string;
  readonly stopBefore?: string;
  readonly only?: string[];
  readonly from?: string;
  /** `up --downloads DIR`: seeds the deployer's download cache. */
  readonly downloads?: string;
  /** `up --images BUNDLE…`: pushed into the services registry. */
  readonly images?: string[];
}

/** How the run is shown: the global --json, and --verbose (or --log-level debug). */
export interface DisplayFlags {
  readonly json: boolean;
  readonly verbose: boolean;
}

/** The task selections a command offers beyond the common flags. */
export type SelectionFlag = 'stop-after' | 'stop-before' | 'only' | 'from';

const SELECTION_HELP: Readonly<Record<SelectionFlag, [string, string]>> = {
  'stop-after': ['--stop-after <stage>', 'run up to and including this stage'],
  'stop-before': ['--stop-before <stage>', 'run the stages before this one'],
  only: ['--only <host...>', 'only tasks on these hosts'],
  from: ['--from <task>', 'start at this task id (it and every later task are re-checked even if done)'],
};

const STATE_DIR_HELP =
  'journal, secrets, known_hosts, logs (env KUBEMIX_STATE_DIR; default .kubemix/<cluster> beside the spec file';

/** --state-dir, for every command that reads or writes a cluster's state. */
export function withStateDirOption(command: Command, alsoBeside?: string): Command {
  return command.option(
    '--state-dir <dir>',
    `${STATE_DIR_HELP}${alsoBeside === undefined ? '' : `, or beside ${alsoBeside}`})`,
  );
}

export interface ExecutorOptionsHelp {
  /** What --check reports for this command. */
  readonly check: string;
  readonly selection: readonly SelectionFlag[];
  /** Whose host key --trust-new-hosts records, when the command has a narrower answer than "any new host". */
  readonly newHosts?: string;
}

/** Every executor flag; the command's own arguments and options stay with the command. */
export function withExecutorOptions(command: Command, help: ExecutorOptionsHelp, alsoBeside?: string): Command {
  const newHosts = help.newHosts === undefined ? '' : `: ${help.newHosts}`;
  withStateDirOption(command, alsoBeside)
    .option(
      '--known-hosts <file>',
      'OpenSSH known_hosts file to verify host keys against (default <state dir>/known_hosts)',
    )
    .option(
      '--trust-new-hosts',
      `record the key of a host seen for the first time (TOFU)${newHosts}; changed keys are still refused`,
    )
    .option('--concurrency <n>', 'tasks running at once per host (default 8)')
    .option('--check', help.check);
  for (const flag of help.selection) command.option(...SELECTION_HELP[flag]);
  return command;
}

export function displayFlags(command: Command): DisplayFlags {
  const globals = command.optsWithGlobals<{ json?: boolean; verbose?: boolean; logLevel?: string }>();
  return { json: globals.json === true, verbose: globals.verbose === true || globals.logLevel === 'debug' };
}

/** The largest count a flag takes: far beyond any cluster, short of what arithmetic loses. */
export const MAX_FLAG_COUNT = 1_000_000;

/**
 * A whole number 1…MAX_FLAG_COUNT written in decimal digits only: `0x10`,
 * ` 2`, `1e3`, `1.0` or an empty value (a variable that expanded to nothing)
 * are refused, not read as JavaScript's Number() would. An environment
 * variable set empty counts as unset (the caller passes undefined).
 */
export function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = /^[1-9][0-9]{0,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= MAX_FLAG_COUNT))
    throw new InputError(
      'flags.invalid',
      `${flag}: expected a whole number from 1 to ${MAX_FLAG_COUNT} in decimal digits, got ${JSON.stringify(value)}`,
      { path: flag },
    );
  return n;
}

/** Tuning knobs (documented in docs/executor.md), mostly for tests and slow links. */
function tuning(env: CliIo['env']): Pick<ApplyOptions, 'retry' | 'ssh'> {
  const n = (name: string): number | undefined =>
    env[name] === undefined || env[name] === '' ? undefined : positiveInt(env[name], name, 1);
  const pick = (o: Record<string, number | undefined>): Record<string, number> =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, number>;
  return {
    retry: pick({ attempts: n('KUBEMIX_RETRY_ATTEMPTS'), baseDelayMs: n('KUBEMIX_RETRY_BASE_MS') }),
    ssh: pick({
      keepaliveIntervalMs: n('KUBEMIX_SSH_KEEPALIVE_MS'),
      readyTimeoutMs: n('KUBEMIX_SSH_CONNECT_TIMEOUT_MS'),
    }),
  };
}

/**
 * --known-hosts FILE, absolute: a regular file, or a new one in a folder that
 * exists (made when a host is first trusted); undefined when not given.
 */
export function knownHostsFlag(given: string | undefined, io: CliIo): string | undefined {
  if (given === undefined) return undefined;
  const ref = { flag: '--known-hosts', given, cwd: io.cwd };
  const hint = 'name an OpenSSH known_hosts file, or a new file in an existing folder';
  try {
    return inputFile(ref, hint);
  } catch (error) {
    // Not there: it may be made, in a folder that exists.
    if (!(error instanceof InputError) || !/: does not exist$/.test(error.message)) throw error;
    return outputFile(ref, true).path;
  }
}

/** applyPlan's options from the flags; listeners and the state directory come from the caller. */
export function applyOptions(flags: ExecutorFlags, io: CliIo): Omit<ApplyOptions, 'stateDir' | 'listeners'> {
  return {
    knownHostsFile: knownHostsFlag(flags.knownHosts, io),
    trustNewHosts: flags.trustNewHosts === true,
    concurrency: positiveInt(flags.concurrency, '--concurrency', 8),
    check: flags.check === true,
    stopAfter: flags.stopAfter === undefined ? undefined : parseStage(flags.stopAfter, '--stop-after'),
    stopBefore: flags.stopBefore === undefined ? undefined : parseStage(flags.stopBefore, '--stop-before'),
    only: flags.only,
    from: flags.from,
    signal: io.signal,
    agent: io.env['SSH_AUTH_SOCK'],
    ...(flags.downloads === undefined ? {} : { downloads: { seed: seedDir(flags.downloads, io) } }),
    ...(flags.images === undefined ? {} : { images: { bundles: flags.images.map((p) => resolve(io.cwd, p)) } }),
    ...tuning(io.env),
  };
}

/** --downloads DIR must be a readable directory. */
function seedDir(dir: string, io: CliIo): string {
  const path = resolve(io.cwd, dir);
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    const hint = 'a directory of release files (their upstream names, or named by SHA256)';
    throw new InputError('flags.downloads', `--downloads ${dir}: not a directory`, { path: '--downloads', hint });
  }
  return path;
}
