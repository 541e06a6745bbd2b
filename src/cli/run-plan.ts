// Running a plan for a command (up, down, add-node): the executor's events
// drawn for a terminal, as plain lines or as JSON lines, and --check's report.
import { FindingsError } from '../errors.js';
import { applyPlan } from '../exec/apply-plan.js';
import type { ExecEvent } from '../exec/events.js';
import type { AssembledPlan } from '../plan/assemble.js';
import type { Plan } from '../plan/types.js';
import { applyOptions, type DisplayFlags, type ExecutorFlags } from './executor-flags.js';
import type { CliIo } from './io.js';
import { plainLine } from './render/plain.js';
import { TtyRenderer } from './render/tty.js';

/** A plan, its artifacts (in memory, or the plan directory holding them) and the state directory to run it with. */
export interface Target {
  readonly plan: Plan;
  readonly artifacts: ReadonlyMap<string, Buffer> | string;
  readonly stateDir: string;
  /** Secrets read from the spec (its URLs' credentials), stored before the run. */
  readonly secrets?: Readonly<Record<string, string>> | undefined;
}

/** A plan assembled in memory, ready for the executor. */
export function inMemoryTarget(assembled: AssembledPlan, stateDir: string): Target {
  const artifacts = new Map(
    assembled.plan.artifacts.map((a, i) => [a.id, Buffer.from(assembled.files[i]?.content ?? '')]),
  );
  return { plan: assembled.plan, artifacts, stateDir, secrets: assembled.secrets };
}

/** The executor's events drawn for the terminal, as plain lines or as JSON lines. */
export function renderer(io: CliIo, display: DisplayFlags): (e: ExecEvent) => void {
  if (display.json) return (e) => io.stdout(`${JSON.stringify(e)}\n`);
  if (io.isTty && !display.verbose) return new TtyRenderer(io.stderr, io.raw?.stderr).listener;
  return (e) => {
    const line = plainLine(e, display.verbose);
    if (line !== undefined) io.stderr(`${line}\n`);
  };
}

function checkReport(io: CliIo): { listener: (e: ExecEvent) => void; print: () => void } {
  const byHost = new Map<string, string[]>();
  return {
    listener: (e) => {
      if (e.type === 'check:result' && e.wouldChange)
        byHost.set(e.host, [...(byHost.get(e.host) ?? []), `  ${e.id}: ${e.reason}`]);
    },
    print: () => {
      if (byHost.size === 0) io.stdout('no changes: every checked task is up to date\n');
      for (const [host, lines] of [...byHost].sort(([a], [b]) => a.localeCompare(b))) {
        io.stdout(`${host}: ${lines.length} task(s) would change\n${lines.join('\n')}\n`);
      }
    },
  };
}

/** Runs a target's plan with the executor flags; --check exits 1 (findings) when something would change. */
export async function runPlan(target: Target, flags: ExecutorFlags, display: DisplayFlags, io: CliIo): Promise<void> {
  const report = checkReport(io);
  const reportChecks = flags.check === true && !display.json;
  const listeners = [renderer(io, display), ...(reportChecks ? [report.listener] : [])];
  const result = await applyPlan(target.plan, target.artifacts, {
    ...applyOptions(flags, io),
    stateDir: target.stateDir,
    listeners,
    ...(target.secrets === undefined ? {} : { provided: target.secrets }),
  });
  if (flags.check !== true) return;
  if (reportChecks) report.print();
  if (result.changes > 0) throw new FindingsError(`${result.changes} task(s) would change their host`);
}
