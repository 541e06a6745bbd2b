// `kubemix down SPEC [--yes] [--all-hosts]`: reset the nodes kubemix deployed
// and give the services node's files back (or, for machines kubemix created,
// remove them and their pinned host keys). Destructive, so it asks on a
// terminal (type the cluster name) and, without a terminal, refuses unless
// --yes was given. On existing hosts it resets only those the deploy journal
// shows kubemix deployed (down-scope.ts).
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
import { ALL_HOSTS_FLAG, downScope } from './down-scope.js';

interface DownFlags extends SpecOptions, ExecutorFlags {
  readonly yes?: boolean;
  readonly allHosts?: boolean;
}

/** Without a terminal to confirm on, --yes (or --check) is required: refused before anything is read from the hosts. */
function confirmable(cluster: string, flags: DownFlags, io: CliIo): void {
  if (flags.yes === true || flags.check === true || io.ask !== undefined) return;
  throw new InputError(
    'down.confirm',
    `kubemix down resets every node of ${cluster}; without a terminal to confirm on, pass --yes`,
    { path: '--yes' },
  );
}

async function confirmed(cluster: string, flags: DownFlags, io: CliIo): Promise<void> {
  if (flags.yes === true || flags.check === true || io.ask === undefined) return;
  const answer = await io.ask(
    `This resets every node of ${cluster} and removes its services. Type the cluster name to go on: `,
  );
  if (answer.trim() !== cluster) throw new InputError('down.cancelled', 'not confirmed: nothing was changed');
}

export function registerDown(program: Command, io: CliIo): void {
  const down = program
    .command('down')
    .description(
      'reset the nodes kubemix deployed (kubeadm reset / Windows reset) and give the services node its files back',
    )
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--yes', 'do not ask for confirmation (required without a terminal)')
    .option(
      ALL_HOSTS_FLAG,
      'existing hosts: reset every host of the spec, also those the deploy journal shows no task done on (required without a terminal when there is no journal)',
    );
  withExecutorOptions(withSpecOptions(down), {
    check: 'show what down would change, change nothing (exit 1 when something would)',
    selection: ['only'],
  }).action(async (spec: string, flags: DownFlags, command: Command) => {
    const loaded = loadSpec(spec, flags, io);
    const state = statePaths(stateDir(flags.stateDir, io, loaded.clusterName, loaded.file));
    const model = resolveModel(loaded);
    confirmable(loaded.clusterName, flags, io);
    // The hosts' scope first: its warnings come before the question they bear on.
    const scope = await downScope(model, state, flags, io);
    await confirmed(loaded.clusterName, flags, io);
    // Its own journal: the deploy journal stays readable until the reset is through.
    const reset = inMemoryTarget(assembleResetPlan(model, scope), state.reset);
    const knownHosts = knownHostsFlag(flags.knownHosts, io) ?? state.knownHosts;
    await runPlan(reset, { ...flags, knownHosts }, displayFlags(command), io);
    if (flags.check === true || flags.only !== undefined) return;
    // Machines kubemix created are gone: so are the host keys it pinned for them.
    await unpinHostKeys(model.hosts, await SecretStore.open(state.secrets), knownHosts);
    // The cluster is gone: `status` starts from "never run"; secrets (the CA) stay for a re-deploy.
    await forgetDeployment(state.root);
  });
}
