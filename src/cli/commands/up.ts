// `kubemix up --plan DIR`: apply (or --check) a plan written by `kubemix plan`.
import type { Command } from 'commander';
import { FindingsError, InputError } from '../../errors.js';
import { applyPlan, type ApplyOptions } from '../../exec/apply-plan.js';
import type { ExecEvent } from '../../exec/events.js';
import { readPlanDir } from '../../exec/plan-dir.js';
import { parseStage } from '../../exec/selection.js';
import { resolveStateDir } from '../../exec/state-dir.js';
import type { CliIo } from '../io.js';
import { plainLine } from '../render/plain.js';
import { TtyRenderer } from '../render/tty.js';

interface UpFlags {
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

export async function runUp(flags: UpFlags, io: CliIo): Promise<void> {
  if (flags.plan === undefined) throw new InputError('flags.plan', 'kubemix up needs --plan DIR (a directory written by `kubemix plan SPEC --out DIR`)');
  const loaded = await readPlanDir(flags.plan);
  const json = flags.json === true;
  const report = checkReport(io);
  const listeners = [renderer(io, json, flags.verbose === true), ...(flags.check === true && !json ? [report.listener] : [])];
  const result = await applyPlan(loaded.plan, loaded.artifacts, {
    stateDir: resolveStateDir(flags.stateDir, io.env, flags.plan, loaded.plan.cluster.name, io.cwd),
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
    ...tuning(io.env),
  });
  if (flags.check === true) {
    if (!json) report.print();
    if (result.changes > 0) throw new FindingsError(`${result.changes} task(s) would change their host`);
  }
}

export function registerUp(program: Command, io: CliIo): void {
  program
    .command('up')
    .description('apply a plan to its hosts over SSH (resumable; --check changes nothing)')
    .option('--plan <dir>', 'plan directory written by `kubemix plan SPEC --out DIR`')
    .option('--state-dir <dir>', 'journal, secrets, known_hosts, logs (env KUBEMIX_STATE_DIR; default <plan dir>/../.kubemix/<cluster>)')
    .option('--known-hosts <file>', 'OpenSSH known_hosts file to verify host keys against (default <state dir>/known_hosts)')
    .option('--trust-new-hosts', 'record the key of a host seen for the first time (TOFU); changed keys are still refused')
    .option('--concurrency <n>', 'tasks running at once per host (default 8)')
    .option('--check', 'run every check and print what would change per host; change nothing (exit 1 when something would)')
    .option('--stop-after <stage>', 'run up to and including this stage')
    .option('--stop-before <stage>', 'run the stages before this one')
    .option('--only <host...>', 'only tasks on these hosts')
    .option('--from <task>', 'start at this task id (it and every later task are re-checked even if done)')
    .action(async (flags: UpFlags, cmd: Command) => {
      const globals = cmd.optsWithGlobals<{ json?: boolean; verbose?: boolean; logLevel?: string }>();
      await runUp({ ...flags, json: globals.json === true, verbose: globals.verbose === true || globals.logLevel === 'debug' }, io);
    });
}
