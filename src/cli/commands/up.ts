// `kubemix up SPEC` / `kubemix up --plan DIR` / `kubemix up SPEC --plan DIR`:
// apply (or --check) the plan of a spec, or a plan written by `kubemix plan`.
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { readPlanDir } from '../../exec/plan-dir.js';
import { directoryPath } from '../../exec/local-paths.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import { displayFlags, withExecutorOptions, type ExecutorFlags } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import type { VerifyFlags } from './verify.js';
import { checkClusterFlags } from '../verify-cluster.js';
import { airGapPreflight, withAirGapOptions } from '../airgap-preflight.js';
import { inMemoryTarget, runPlan, type Target } from '../run-plan.js';
import { outputFor, stateDir, stateDirBeside } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

interface UpFlags extends ExecutorFlags {
  readonly plan?: string;
  readonly skipVerify?: boolean;
  readonly egress?: string[];
  readonly probeImage?: string[];
  readonly images?: string[];
}

/** The plan to apply: planned from SPEC in memory, read from --plan DIR, or both (then they must agree). */
async function loadTarget(spec: string | undefined, flags: UpFlags & SpecOptions, io: CliIo): Promise<Target> {
  if (spec === undefined && flags.plan === undefined) {
    throw new InputError(
      'flags.plan',
      'kubemix up needs SPEC, or --plan DIR (a directory written by `kubemix plan SPEC --out DIR`)',
    );
  }
  const planDir =
    flags.plan === undefined
      ? undefined
      : directoryPath({ flag: '--plan', given: flags.plan, cwd: io.cwd }, false).path;
  const fromDir = planDir === undefined ? undefined : await readPlanDir(planDir);
  if (spec === undefined && fromDir !== undefined && planDir !== undefined) {
    const stateDir = stateDirBeside(flags.stateDir, io, fromDir.plan.cluster.name, dirname(planDir));
    return { plan: fromDir.plan, artifacts: fromDir.artifacts, stateDir };
  }
  const loaded = loadSpec(spec ?? '', flags, io);
  const assembled = assemblePlan(resolveModel(loaded));
  const dir = stateDir(flags.stateDir, io, loaded.clusterName, loaded.file);
  if (fromDir !== undefined) {
    if (fromDir.plan.hash !== assembled.plan.hash) {
      throw new InputError(
        'plan.stale',
        `${spec ?? ''} no longer produces the plan in ${flags.plan ?? ''} (plan ${fromDir.plan.hash.slice(0, 12)}, spec ${assembled.plan.hash.slice(0, 12)})`,
        {
          path: '--plan',
          hint: 'run `kubemix plan SPEC --out DIR` again and review it, or run `kubemix up SPEC` without --plan',
        },
      );
    }
    return { plan: fromDir.plan, artifacts: fromDir.artifacts, stateDir: dir, secrets: assembled.secrets };
  }
  return inMemoryTarget(assembled, dir);
}

const collect = (v: string, all: string[] = []): string[] => [...all, v];

export function registerUp(program: Command, io: CliIo): void {
  const up = program
    .command('up')
    .description('apply the plan of SPEC (or of --plan DIR) to its hosts over SSH (resumable; --check changes nothing)')
    .argument('[SPEC]', 'spec file or Kubeinit string; with --plan DIR the plan must be what SPEC produces')
    .option('--plan <dir>', 'plan directory written by `kubemix plan SPEC --out DIR`');
  withAirGapOptions(up)
    .option('--skip-verify', 'do not end with `kubemix verify` (underlay and cluster layers) after a complete apply')
    .option('--egress <host:port>', 'the verify at the end: as `kubemix verify --egress`; repeatable', collect)
    .option('--probe-image <key=ref>', 'the verify at the end: as `kubemix verify --probe-image`; repeatable', collect);
  withExecutorOptions(
    withSpecOptions(up),
    {
      check: 'run every check and print what would change per host; change nothing (exit 1 when something would)',
      selection: ['stop-after', 'stop-before', 'only', 'from'],
    },
    'DIR',
  ).action(async (spec: string | undefined, flags: UpFlags & SpecOptions, command: Command) => {
    // The verify flags are input too: refused (exit 2) before any host is touched.
    checkClusterFlags(flags);
    const target = await loadTarget(spec, flags, io);
    // Air-gapped: everything the nodes need is here before any of them is touched (exit 2 otherwise).
    if (flags.check !== true) await airGapPreflight(target.plan, target.stateDir, flags, io);
    await runPlan(target, flags, displayFlags(command), io);
    // A deploy is done when verify passes: both layers, after a whole plan was applied (not a --check,
    // not a selection of stages or tasks); a failing check makes `up` exit 1 with the report.
    const whole = [flags.stopAfter, flags.stopBefore, flags.from, flags.only?.[0]].every((f) => f === undefined);
    if (spec !== undefined && flags.check !== true && flags.skipVerify !== true && whole) {
      const { runVerify } = await import('./verify.js');
      const { stateDir, knownHosts, trustNewHosts, hypervisors, nodes, egress, probeImage } = flags;
      const given = Object.entries({ stateDir, knownHosts, trustNewHosts, hypervisors, nodes, egress, probeImage });
      const verifyFlags = Object.fromEntries(given.filter(([, v]) => v !== undefined)) as VerifyFlags;
      await runVerify(spec, verifyFlags, io, outputFor(command, io));
    }
  });
}
