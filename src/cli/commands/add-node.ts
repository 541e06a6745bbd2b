// `kubemix add-node SPEC` after adding nodes to the spec: says which nodes
// are new and which tasks of the existing hosts change because of them
// (load balancer backends, DNS records, DHCP reservations), then
// applies exactly those: the journal skips every task whose inputs did not
// change. Removing nodes is `down`'s business, so a spec that dropped a node
// the journal knows is refused.
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { readJournal, type JournalDocument } from '../../exec/journal.js';
import { specSecretInputs } from '../../exec/secret-inputs.js';
import { statePaths } from '../../exec/state-dir.js';
import { clusterStatus } from '../../exec/status.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import { displayFlags, knownHostsFlag, withExecutorOptions, type ExecutorFlags } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { inMemoryTarget, runPlan } from '../run-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

async function journalOf(dir: string): Promise<JournalDocument> {
  const journal = await readJournal(dir);
  if (journal === undefined) {
    throw new InputError('add-node.never-deployed', `no deployment recorded in ${dir}`, {
      hint: 'deploy the cluster with `kubemix up SPEC` first',
    });
  }
  return journal;
}

export function registerAddNode(program: Command, io: CliIo): void {
  const addNode = program
    .command('add-node')
    .description('after adding nodes to the spec: deploy them and update what depends on them, nothing else')
    .argument('<SPEC>', 'spec file (with the new nodes) or Kubeinit string');
  withExecutorOptions(withSpecOptions(addNode), {
    check: 'show what would change, change nothing',
    selection: ['stop-after'],
    newHosts: 'the new nodes',
  }).action(async (spec: string, flags: SpecOptions & ExecutorFlags, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, flags, io);
    const dir = stateDir(flags.stateDir, io, loaded.clusterName, loaded.file);
    const journal = await journalOf(dir);
    const assembled = assemblePlan(resolveModel(loaded));
    const planned = new Set(assembled.plan.tasks.map((t) => t.host));
    const known = new Set(Object.values(journal.tasks).map((e) => e.host));
    const gone = [...known].filter((h) => !planned.has(h)).sort();
    if (gone.length > 0) {
      throw new InputError(
        'add-node.removed',
        `the spec no longer has ${gone.join(', ')}, which the last deployment has`,
        { hint: 'add-node only adds; reset removed nodes with `kubemix down SPEC --only HOST` using the old spec' },
      );
    }
    const added = [...planned].filter((h) => !known.has(h)).sort();
    const inputs = await specSecretInputs(assembled, statePaths(dir).secrets);
    const changed = clusterStatus(assembled.plan, journal, inputs)
      .hosts.filter((h) => known.has(h.host) && h.left > 0)
      .map((h) => `${h.host} (${h.left} task${h.left === 1 ? '' : 's'})`);
    out.log(
      'info',
      `new: ${added.join(', ') || 'none'}; existing hosts with tasks left or changed: ${changed.join(', ') || 'none'}`,
    );
    const knownHosts = knownHostsFlag(flags.knownHosts, io) ?? statePaths(dir).knownHosts;
    await runPlan(inMemoryTarget(assembled, dir), { ...flags, knownHosts }, displayFlags(command), io);
  });
}
