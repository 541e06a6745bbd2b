// `kubemix up SPEC` / `kubemix up --plan DIR` / `kubemix up SPEC --plan DIR`:
// apply (or --check) the plan of a spec, or a plan written by `kubemix plan`.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { FindingsError, InputError } from '../../errors.js';
import { applyPlan, type ApplyOptions } from '../../exec/apply-plan.js';
import type { ExecEvent } from '../../exec/events.js';
import { readPlanDir } from '../../exec/plan-dir.js';
import { parseStage } from '../../exec/selection.js';
import { resolveStateDir } from '../../exec/state-dir.js';
import type { CliIo } from '../io.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../../plan/assemble.js';
import type { Plan } from '../../plan/types.js';
import { stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';
import { plainLine } from '../render/plain.js';
import { TtyRenderer } from '../render/tty.js';

export interface UpFlags {
  plan?: string;
  stateDir?: string;
  knownHosts?: string;
  trustNewHosts?: boolean;
  concurrency?: string;
  check?: boolean;
  stopAfter?: string;
  stopBefore?: string;
  only?: string[];
  from?: string;
  json?: boolean;
  verbose?: boolean;
  downloads?: string;
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InputError('flags.invalid', `${flag}: expected a positive integer, got ${value}`);
  return n;
}

/** Tuning knobs (documented in docs/executor.md), mostly for tests and slow links. */
function tuning(env: CliIo['env']): Pick<ApplyOptions, 'retry' | 'ssh'> {
  const n = (name: string): number | undefined => (env[name] === undefined || env[name] === '' ? undefined : positiveInt(env[name], name, 1));
  const pick = (o: Record<string, number | undefined>): Record<string, number> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, number>;
  return {
    retry: pick({ attempts: n('KUBEMIX_RETRY_ATTEMPTS'), baseDelayMs: n('KUBEMIX_RETRY_BASE_MS') }),
    ssh: pick({ keepaliveIntervalMs: n('KUBEMIX_SSH_KEEPALIVE_MS'), readyTimeoutMs: n('KUBEMIX_SSH_CONNECT_TIMEOUT_MS') }),
  };
}

function renderer(io: CliIo, json: boolean, verbose: boolean): (e: ExecEvent) => void {
  if (json) return (e) => io.stdout(`${JSON.stringify(e)}\n`);
  if (io.isTty && !verbose) return new TtyRenderer(io.stderr).listener;
  return (e) => {
    const line = plainLine(e, verbose);
    if (line !== undefined) io.stderr(`${line}\n`);
  };
}

function checkReport(io: CliIo): { listener: (e: ExecEvent) => void; print: () => void } {
  const byHost = new Map<string, string[]>();
  return {
    listener: (e) => {
      if (e.type === 'check:result' && e.wouldChange) byHost.set(e.host, [...(byHost.get(e.host) ?? []), `  ${e.id}: ${e.reason}`]);
    },
    print: () => {
      if (byHost.size === 0) io.stdout('no changes: every checked task is up to date\n');
      for (const [host, lines] of [...byHost].sort(([a], [b]) => a.localeCompare(b))) io.stdout(`${host}: ${lines.length} task(s) would change\n${lines.join('\n')}\n`);
    },
  };
}

export interface Target {
  readonly plan: Plan;
  readonly artifacts: ReadonlyMap<string, Buffer> | string;
  readonly stateDir: string;
}

/** The plan to apply: planned from SPEC in memory, read from --plan DIR, or both (then they must agree). */
async function loadTarget(spec: string | undefined, flags: UpFlags & SpecOptions, io: CliIo): Promise<Target> {
  if (spec === undefined && flags.plan === undefined) {
    throw new InputError('flags.plan', 'kubemix up needs SPEC, or --plan DIR (a directory written by `kubemix plan SPEC --out DIR`)');
  }
  const fromDir = flags.plan === undefined ? undefined : await readPlanDir(flags.plan);
  if (spec === undefined && fromDir !== undefined && flags.plan !== undefined) {
    return { plan: fromDir.plan, artifacts: fromDir.artifacts, stateDir: resolveStateDir(flags.stateDir, io.env, flags.plan, fromDir.plan.cluster.name, io.cwd) };
  }
  const loaded = loadSpec(spec ?? '', flags, io);
  const assembled = assemblePlan(resolveModel(loaded));
  const dir = stateDir(flags.stateDir, io, loaded.spec.name, loaded.file);
  if (fromDir !== undefined) {
    if (fromDir.plan.hash !== assembled.plan.hash) {
      throw new InputError('plan.stale', `${spec ?? ''} no longer produces the plan in ${flags.plan ?? ''} (plan ${fromDir.plan.hash.slice(0, 12)}, spec ${assembled.plan.hash.slice(0, 12)})`, {
        path: '--plan',
        hint: 'run `kubemix plan SPEC --out DIR` again and review it, or run `kubemix up SPEC` without --plan',
      });
    }
    return { plan: fromDir.plan, artifacts: fromDir.artifacts, stateDir: dir };
  }
  return inMemoryTarget(assembled, dir);
}

/** A plan assembled in memory, ready for the executor. */
export function inMemoryTarget(assembled: AssembledPlan, stateDir: string): Target {
  const artifacts = new Map(assembled.plan.artifacts.map((a, i) => [a.id, Buffer.from(assembled.files[i]?.content ?? '')]));
  return { plan: assembled.plan, artifacts, stateDir };
}

export async function runUp(spec: string | undefined, flags: UpFlags & SpecOptions, io: CliIo): Promise<void> {
  await execute(await loadTarget(spec, flags, io), flags, io);
}

/** Runs a target's plan with the executor flags `up` (and `down`) take. */
export async function execute(loaded: Target, flags: UpFlags, io: CliIo): Promise<void> {
  const json = flags.json === true;
  const report = checkReport(io);
  const listeners = [renderer(io, json, flags.verbose === true), ...(flags.check === true && !json ? [report.listener] : [])];
  const result = await applyPlan(loaded.plan, loaded.artifacts, {
    stateDir: loaded.stateDir,
    knownHostsFile: flags.knownHosts,
    trustNewHosts: flags.trustNewHosts === true,
    concurrency: positiveInt(flags.concurrency, '--concurrency', 8),
    check: flags.check === true,
    stopAfter: flags.stopAfter === undefined ? undefined : parseStage(flags.stopAfter, '--stop-after'),
    stopBefore: flags.stopBefore === undefined ? undefined : parseStage(flags.stopBefore, '--stop-before'),
    only: flags.only,
    from: flags.from,
    signal: io.signal,
    listeners,
    agent: io.env['SSH_AUTH_SOCK'],
    ...(flags.downloads === undefined ? {} : { downloads: { seed: await seedDir(flags.downloads, io) } }),
    ...tuning(io.env),
  });
  if (flags.check === true) {
    if (!json) report.print();
    if (result.changes > 0) throw new FindingsError(`${result.changes} task(s) would change their host`);
  }
}

/** --downloads DIR must be a readable directory. */
async function seedDir(dir: string, io: CliIo): Promise<string> {
  const path = resolve(io.cwd, dir);
  const ok = await stat(path).then((s) => s.isDirectory(), () => false);
  if (!ok) throw new InputError('flags.downloads', `--downloads ${dir}: not a directory`, { path: '--downloads', hint: 'a directory of release files (their upstream names, or named by SHA256)' });
  return path;
}

export function registerUp(program: Command, io: CliIo): void {
  withSpecOptions(program
    .command('up')
    .description('apply the plan of SPEC (or of --plan DIR) to its hosts over SSH (resumable; --check changes nothing)')
    .argument('[SPEC]', 'spec file or Kubeinit string; with --plan DIR the plan must be what SPEC produces')
    .option('--plan <dir>', 'plan directory written by `kubemix plan SPEC --out DIR`')
    .option('--state-dir <dir>', 'journal, secrets, known_hosts, logs (env KUBEMIX_STATE_DIR; default .kubemix/<cluster> beside the spec file, or beside DIR)'))
    .option('--known-hosts <file>', 'OpenSSH known_hosts file to verify host keys against (default <state dir>/known_hosts)')
    .option('--trust-new-hosts', 'record the key of a host seen for the first time (TOFU); changed keys are still refused')
    .option('--concurrency <n>', 'tasks running at once per host (default 8)')
    .option('--check', 'run every check and print what would change per host; change nothing (exit 1 when something would)')
    .option('--stop-after <stage>', 'run up to and including this stage')
    .option('--stop-before <stage>', 'run the stages before this one')
    .option('--only <host...>', 'only tasks on these hosts')
    .option('--from <task>', 'start at this task id (it and every later task are re-checked even if done)')
    .option('--downloads <dir>', 'seed the download cache from this directory (air-gapped sites); every file is still checked against its SHA256')
    .action(async (spec: string | undefined, flags: UpFlags & SpecOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ json?: boolean; verbose?: boolean; logLevel?: string }>();
      await runUp(spec, { ...flags, json: globals.json === true, verbose: globals.verbose === true || globals.logLevel === 'debug' }, io);
    });
}
