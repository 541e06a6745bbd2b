// `kubemix down SPEC [--yes]`: reset every node and clean up the services
// node (or, for machines kubemix created, remove them and their pinned host keys). Destructive, so it asks on a terminal (type the cluster name) and,
// without a terminal, refuses unless --yes was given.
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { unpinHostKeys } from '../../exec/pin-host-keys.js';
import { SecretStore } from '../../exec/secrets.js';
import { forgetDeployment, statePaths } from '../../exec/state-dir.js';
import { resolveModel } from '../../model/resolve.js';
import { assembleResetPlan } from '../../plan/reset.js';
import { displayFlags, knownHostsFlag, withExecutorOptions, type ExecutorFlags } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { inMemoryTarget, runPlan } from '../run-plan.js';
import { stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

interface DownFlags extends SpecOptions, ExecutorFlags {
  readonly yes?: boolean;
}

async function confirmed(cluster: string, flags: DownFlags, io: CliIo): Promise<void> {
  if (flags.yes === true || flags.check === true) return;
  if (io.ask === undefined) {
    throw new InputError(
      'down.confirm',
      `kubemix down resets every node of ${cluster}; without a terminal to confirm on, pass --yes`,
      { path: '--yes' },
    );
  }
  const answer = await io.ask(
    `This resets every node of ${cluster} and removes its services. Type the cluster name to go on: `,
  );
  if (answer.trim() !== cluster) throw new InputError('down.cancelled', 'not confirmed: nothing was changed');
}

export function registerDown(program: Command, io: CliIo): void {
  const down = program
    .command('down')
    .description('reset every node (kubeadm reset / Windows reset) and clean up the services node')
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--yes', 'do not ask for confirmation (required without a terminal)');
  withExecutorOptions(withSpecOptions(down), {
    check: 'show what down would change, change nothing (exit 1 when something would)',
    selection: ['only'],
  }).action(async (spec: string, flags: DownFlags, command: Command) => {
    const loaded = loadSpec(spec, flags, io);
    await confirmed(loaded.clusterName, flags, io);
    const state = statePaths(stateDir(flags.stateDir, io, loaded.clusterName, loaded.file));
    // Its own journal: the deploy journal stays readable until the reset is through.
    const model = resolveModel(loaded);
    const reset = inMemoryTarget(assembleResetPlan(model), state.reset);
    const knownHosts = knownHostsFlag(flags.knownHosts, io) ?? state.knownHosts;
    await runPlan(reset, { ...flags, knownHosts }, displayFlags(command), io);
    if (flags.check === true || flags.only !== undefined) return;
    // Machines kubemix created are gone: so are the host keys it pinned for them.
    await unpinHostKeys(model.hosts, await SecretStore.open(state.secrets), knownHosts);
    // The cluster is gone: `status` starts from "never run"; secrets (the CA) stay for a re-deploy.
    await forgetDeployment(state.root);
  });
}
