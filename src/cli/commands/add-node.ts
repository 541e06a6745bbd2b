// `kubemix add-node SPEC` after adding nodes to the spec: says which nodes
// are new and which tasks of the existing hosts change because of them
// (load balancer backends, DNS records, DHCP reservations), then
// applies exactly those: the journal skips every task whose inputs did not
// change. Removing nodes is `down`'s business, so a spec that dropped a node
// the journal knows is refused.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import type { JournalDocument } from '../../exec/journal.js';
import { clusterStatus } from '../../exec/status.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import type { CliIo } from '../io.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';
import { execute, inMemoryTarget, type UpFlags } from './up.js';

async function journalOf(dir: string): Promise<JournalDocument> {
  try {
    return JSON.parse(await readFile(join(dir, 'journal.json'), 'utf8')) as JournalDocument;
  } catch {
    throw new InputError('add-node.never-deployed', `no deployment recorded in ${dir}`, { hint: 'deploy the cluster with `kubemix up SPEC` first' });
  }
}

export function registerAddNode(program: Command, io: CliIo): void {
  withSpecOptions(program
    .command('add-node')
    .description('after adding nodes to the spec: deploy them and update what depends on them, nothing else')
    .argument('<SPEC>', 'spec file (with the new nodes) or Kubeinit string')
    .option('--state-dir <dir>', 'state directory (env KUBEMIX_STATE_DIR; default .kubemix/<cluster> beside the spec file)')
    .option('--known-hosts <file>', 'OpenSSH known_hosts to verify against (default <state dir>/known_hosts)')
    .option('--trust-new-hosts', 'record the key of a host seen for the first time (TOFU): the new nodes')
    .option('--concurrency <n>', 'tasks running at once per host (default 8)')
    .option('--check', 'show what would change, change nothing')
    .option('--stop-after <stage>', 'run up to and including this stage'))
    .action(async (spec: string, flags: SpecOptions & UpFlags, command: Command) => {
      const out = outputFor(command, io);
      const loaded = loadSpec(spec, flags, io);
      const dir = stateDir(flags.stateDir, io, loaded.spec.name, loaded.file);
      const journal = await journalOf(dir);
      const assembled = assemblePlan(resolveModel(loaded));
      const planned = new Set(assembled.plan.tasks.map((t) => t.host));
      const known = new Set(Object.values(journal.tasks).map((e) => e.host));
      const gone = [...known].filter((h) => !planned.has(h)).sort();
      if (gone.length > 0) {
        throw new InputError('add-node.removed', `the spec no longer has ${gone.join(', ')}, which the last deployment has`, { hint: 'add-node only adds; reset removed nodes with `kubemix down SPEC --only HOST` using the old spec' });
      }
      const added = [...planned].filter((h) => !known.has(h)).sort();
      const changed = clusterStatus(assembled.plan, journal).hosts.filter((h) => known.has(h.host) && h.left > 0).map((h) => `${h.host} (${h.left} task${h.left === 1 ? '' : 's'})`);
      out.log('info', `new: ${added.join(', ') || 'none'}; existing hosts with tasks left or changed: ${changed.join(', ') || 'none'}`);
      const globals = command.optsWithGlobals<{ json?: boolean; verbose?: boolean }>();
      await execute(inMemoryTarget(assembled, dir), { ...flags, knownHosts: flags.knownHosts ?? join(dir, 'known_hosts'), json: globals.json === true, verbose: globals.verbose === true }, io);
    });
}
