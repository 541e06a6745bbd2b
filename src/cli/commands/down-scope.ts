// Which existing hosts `kubemix down` may reset (issue #31: it reset hosts the
// journal never deployed). A host is kubemix's to reset when the deploy
// journal has at least one task done on it; the others are left alone and
// named, with the flag that takes them in. With no journal kubemix cannot
// tell: it says so and wants a typed confirmation on a terminal, or
// --all-hosts without one. Machines a driver created are the driver's to
// remove: they are always in scope.
import { InputError } from '../../errors.js';
import { readJournal } from '../../exec/journal.js';
import type { StatePaths } from '../../exec/state-dir.js';
import { driverFor } from '../../drivers/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { ResetScope } from '../../plan/reset.js';
import type { CliIo } from '../io.js';

export const ALL_HOSTS_FLAG = '--all-hosts';

export interface DownScopeFlags {
  readonly allHosts?: boolean;
  readonly yes?: boolean;
  readonly check?: boolean;
  readonly only?: readonly string[];
}

/** The hosts `down` resets; warnings about the others go to stderr. Throws (exit 2) when it cannot decide unattended. */
export async function downScope(
  model: ClusterModel,
  state: StatePaths,
  flags: DownScopeFlags,
  io: CliIo,
): Promise<ResetScope> {
  const every: ResetScope = () => true;
  if (flags.allHosts === true || driverFor(model.cluster.driver).createsMachines) return every;
  const journal = await readJournal(state.root);
  const hosts = model.hosts.map((h) => h.name);
  if (journal === undefined) {
    noJournal(model.cluster.name, hosts, state, flags, io);
    return every;
  }
  const deployed = new Set(
    Object.values(journal.tasks)
      .filter((e) => e.state === 'done')
      .map((e) => e.host),
  );
  const skipped = hosts.filter((h) => !deployed.has(h));
  if (skipped.length > 0)
    io.stderr(
      `WARNING: the deploy journal (${state.journal}) has no task done on ${skipped.join(', ')}: ` +
        `kubemix did not deploy ${skipped.length === 1 ? 'it' : 'them'}, so down leaves ${skipped.length === 1 ? 'it' : 'them'} alone. ` +
        `Pass ${ALL_HOSTS_FLAG} to reset ${skipped.length === 1 ? 'it' : 'them'} too.\n`,
    );
  outOfScope(flags.only, skipped);
  return (host) => deployed.has(host);
}

/** `--only` naming a host the scope left out would run nothing, silently: said instead. */
function outOfScope(only: readonly string[] | undefined, skipped: readonly string[]): void {
  const named = (only ?? []).filter((h) => skipped.includes(h));
  if (named.length === 0) return;
  throw new InputError(
    'down.not-deployed',
    `--only ${named.join(' ')}: the deploy journal has no task done on ${named.join(', ')}, so down leaves ${named.length === 1 ? 'it' : 'them'} alone`,
    { path: '--only', hint: `add ${ALL_HOSTS_FLAG} to reset ${named.length === 1 ? 'it' : 'them'} anyway` },
  );
}

/**
 * No deploy journal: every host would be reset, whether kubemix deployed it
 * or not. Allowed after a loud warning with --check (changes nothing) or on a
 * terminal (the cluster-name prompt follows); refused otherwise.
 */
function noJournal(
  cluster: string,
  hosts: readonly string[],
  state: StatePaths,
  flags: DownScopeFlags,
  io: CliIo,
): void {
  const what =
    `no deploy journal at ${state.journal}: kubemix cannot tell which hosts of ${cluster} it deployed, ` +
    `and down would reset every host of the spec (${hosts.join(', ')})`;
  if (flags.check === true || (io.ask !== undefined && flags.yes !== true)) {
    io.stderr(`WARNING: ${what}. Go on only if every one of them is this cluster's to reset.\n`);
    return;
  }
  throw new InputError('down.no-journal', what, {
    path: ALL_HOSTS_FLAG,
    hint: `pass ${ALL_HOSTS_FLAG} if every host of the spec is this cluster's to reset, or --state-dir for the state directory the deployment used`,
  });
}
