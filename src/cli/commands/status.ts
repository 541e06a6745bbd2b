// `kubemix status SPEC`: per host, what is done, what is left, what failed.
// Exit 0 when every planned task is done with today's inputs, 1 otherwise.
import type { Command } from 'commander';
import { FindingsError } from '../../errors.js';
import { readJournal } from '../../exec/journal.js';
import { specSecretInputs } from '../../exec/secret-inputs.js';
import { statePaths } from '../../exec/state-dir.js';
import { clusterStatus, type ClusterStatus } from '../../exec/status.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import type { CliIo } from '../io.js';
import { withStateDirOption } from '../executor-flags.js';
import { table } from '../render-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

function statusText(status: ClusterStatus): string {
  const rows = status.hosts.map((h) => [
    h.host,
    String(h.done),
    String(h.left),
    String(h.failed),
    h.failures[0]?.error ?? h.next ?? '-',
  ]);
  const lines = [table([['HOST', 'DONE', 'LEFT', 'FAILED', 'NEXT / LAST ERROR'], ...rows])];
  if (status.journalPlanHash === undefined) lines.push('', 'never run: `kubemix up SPEC` starts it');
  else if (status.journalPlanHash !== status.planHash)
    lines.push('', 'the spec changed since the last run: tasks whose inputs changed count as left');
  lines.push('', status.complete ? 'complete' : 'incomplete');
  return `${lines.join('\n')}\n`;
}

export function registerStatus(program: Command, io: CliIo): void {
  withStateDirOption(
    withSpecOptions(
      program
        .command('status')
        .description('per host: tasks done, left and failed (exit 1 while incomplete)')
        .argument('<SPEC>', 'spec file or Kubeinit string'),
    ),
  ).action(async (spec: string, flags: SpecOptions & { stateDir?: string }, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, flags, io);
    const assembled = assemblePlan(resolveModel(loaded));
    const dir = stateDir(flags.stateDir, io, loaded.clusterName, loaded.file);
    // The spec's URL credentials as `up SPEC` would hash them: a rotated password counts as outdated.
    const inputs = await specSecretInputs(assembled, statePaths(dir).secrets);
    const status = clusterStatus(assembled.plan, await readJournal(dir), inputs);
    const document = { ok: status.complete, ...status };
    if (!out.json) out.text(statusText(status));
    if (!status.complete)
      throw new FindingsError('the cluster is not fully deployed', {
        hint: 're-run `kubemix up SPEC` to continue',
        report: document,
      });
    if (out.json) out.document(document);
  });
}
