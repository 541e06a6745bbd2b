// `kubemix down SPEC [--yes]`: reset every node and clean up the services
// node. Destructive, so it asks on a terminal (type the cluster name) and,
// without a terminal, refuses unless --yes was given.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { resolveModel } from '../../model/resolve.js';
import { assembleResetPlan } from '../../plan/reset.js';
import type { CliIo } from '../io.js';
import { stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';
import { execute, inMemoryTarget, type UpFlags } from './up.js';

interface DownFlags extends SpecOptions, UpFlags {
  readonly yes?: boolean;
}

async function confirmed(cluster: string, flags: DownFlags, io: CliIo): Promise<void> {
  if (flags.yes === true || flags.check === true) return;
  if (io.ask === undefined) {
    throw new InputError('down.confirm', `kubemix down resets every node of ${cluster}; without a terminal to confirm on, pass --yes`, { path: '--yes' });
  }
  const answer = await io.ask(`This resets every node of ${cluster} and removes its services. Type the cluster name to go on: `);
  if (answer.trim() !== cluster) throw new InputError('down.cancelled', 'not confirmed: nothing was changed');
}

export function registerDown(program: Command, io: CliIo): void {
  withSpecOptions(program
    .command('down')
    .description('reset every node (kubeadm reset / Windows reset) and clean up the services node')
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--yes', 'do not ask for confirmation (required without a terminal)')
    .option('--state-dir <dir>', 'state directory (env KUBEMIX_STATE_DIR; default .kubemix/<cluster> beside the spec file)')
    .option('--known-hosts <file>', 'OpenSSH known_hosts to verify against (default <state dir>/known_hosts)')
    .option('--trust-new-hosts', 'record the key of a host seen for the first time (TOFU)')
    .option('--concurrency <n>', 'tasks running at once per host (default 8)')
    .option('--check', 'show what down would change, change nothing (exit 1 when something would)')
    .option('--only <host...>', 'only these hosts'))
    .action(async (spec: string, flags: DownFlags, command: Command) => {
      const loaded = loadSpec(spec, flags, io);
      await confirmed(loaded.spec.name, flags, io);
      const root = stateDir(flags.stateDir, io, loaded.spec.name, loaded.file);
      const globals = command.optsWithGlobals<{ json?: boolean; verbose?: boolean }>();
      // Its own journal: the deploy journal stays readable until the reset is through.
      const reset = inMemoryTarget(assembleResetPlan(resolveModel(loaded)), join(root, 'down'));
      await execute(reset, { ...flags, knownHosts: flags.knownHosts ?? join(root, 'known_hosts'), json: globals.json === true, verbose: globals.verbose === true }, io);
      // The cluster is gone: `status` starts from "never run"; secrets (the CA) stay for a re-deploy.
      if (flags.check !== true && flags.only === undefined) {
        await rm(join(root, 'journal.json'), { force: true });
        await rm(join(root, 'down'), { recursive: true, force: true });
      }
    });
}
