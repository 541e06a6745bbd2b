// `kubemix patch SPEC [--nodes …] [--kb KB…] [--security-only]`: Windows
// updates on Windows workers, one node at a time (--max-unavailable), through
// the executor: cordon, drain, install, reboot, Ready, pod network back,
// uncordon. Its journal lives in <state>/patch while a roll is under way (a
// re-run resumes it) and is cleared once the roll is through, so next
// month's run starts afresh. --check lists what would change (pending updates
// per node) without installing.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { statePaths } from '../../exec/state-dir.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePatchPlan } from '../../plan/patch/assemble.js';
import { displayFlags, positiveInt, withExecutorOptions, type ExecutorFlags } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { inMemoryTarget, runPlan } from '../run-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec } from '../spec-arg.js';

// --nodes here names the Windows workers to patch, so the Kubeinit-only --nodes/--hypervisors overrides are not offered.
interface PatchFlags extends ExecutorFlags {
  readonly nodes?: string[];
  readonly kb?: string[];
  readonly securityOnly?: boolean;
  readonly maxUnavailable?: string;
}

function kbs(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((v) => {
    const m = /^(?:KB)?(\d{6,8})$/i.exec(v.trim());
    if (m === null)
      throw new InputError('flags.kb', `--kb ${JSON.stringify(v)} is not a KB article number`, {
        path: '--kb',
        hint: 'e.g. --kb KB5040437',
      });
    return `KB${m[1] ?? ''}`;
  });
}

export function registerPatch(program: Command, io: CliIo): void {
  const patch = program
    .command('patch')
    .description('install Windows updates on Windows workers one at a time (cordon, drain, reboot, checks, uncordon)')
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--nodes <name...>', 'only these Windows workers')
    .option('--kb <article...>', 'only these updates (KB5040437)')
    .option('--security-only', 'only updates in the Security Updates category')
    .option('--max-unavailable <n>', 'Windows workers patched at once', '1');
  withExecutorOptions(patch, {
    check: 'list the nodes with pending updates, install nothing',
    selection: [],
  }).action(async (spec: string, flags: PatchFlags, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, {}, io);
    const plan = assemblePatchPlan(resolveModel(loaded), {
      nodes: flags.nodes,
      kbs: kbs(flags.kb),
      securityOnly: flags.securityOnly === true,
      maxUnavailable: positiveInt(flags.maxUnavailable, '--max-unavailable', 1),
    });
    if (plan.plan.tasks.length === 0) {
      out.log('info', `${loaded.clusterName} has no Windows worker to patch`);
      return;
    }
    const state = statePaths(stateDir(flags.stateDir, io, loaded.clusterName, loaded.file));
    const own = join(state.root, 'patch');
    await runPlan(
      inMemoryTarget(plan, own),
      { ...flags, knownHosts: flags.knownHosts ?? state.knownHosts },
      displayFlags(command),
      io,
    );
    if (flags.check !== true) await rm(statePaths(own).journal, { force: true });
  });
}
