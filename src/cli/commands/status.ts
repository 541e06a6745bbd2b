// `kubemix status SPEC`: per host, what is done, what is left, what failed.
// Exit 0 when every planned task is done with today's inputs, 1 otherwise.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { FindingsError, InputError } from '../../errors.js';
import type { JournalDocument } from '../../exec/journal.js';
import { clusterStatus, type ClusterStatus } from '../../exec/status.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import type { CliIo } from '../io.js';
import { table } from '../render-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

async function readJournal(dir: string): Promise<JournalDocument | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'journal.json'), 'utf8')) as JournalDocument;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new InputError('state.journal', `cannot read the journal in ${dir}: ${error instanceof Error ? error.message : String(error)}`, { path: join(dir, 'journal.json') });
  }
}

function statusText(status: ClusterStatus): string {
  const rows = status.hosts.map((h) => [h.host, String(h.done), String(h.left), String(h.failed), h.failures[0]?.error ?? h.next ?? '-']);
  const lines = [table([['HOST', 'DONE', 'LEFT', 'FAILED', 'NEXT / LAST ERROR'], ...rows])];
  if (status.journalPlanHash === undefined) lines.push('', 'never run: `kubemix up SPEC` starts it');
  else if (status.journalPlanHash !== status.planHash) lines.push('', 'the spec changed since the last run: tasks whose inputs changed count as left');
  lines.push('', status.complete ? 'complete' : 'incomplete');
  return `${lines.join('\n')}\n`;
}

export function registerStatus(program: Command, io: CliIo): void {
  withSpecOptions(program
    .command('status')
    .description('per host: tasks done, left and failed (exit 1 while incomplete)')
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--state-dir <dir>', 'state directory (env KUBEMIX_STATE_DIR; default .kubemix/<cluster> beside the spec file)'))
    .action(async (spec: string, flags: SpecOptions & { stateDir?: string }, command: Command) => {
      const out = outputFor(command, io);
      const loaded = loadSpec(spec, flags, io);
      const plan = assemblePlan(resolveModel(loaded)).plan;
      const status = clusterStatus(plan, await readJournal(stateDir(flags.stateDir, io, loaded.spec.name, loaded.file)));
      const document = { ok: status.complete, ...status };
      if (!out.json) out.text(statusText(status));
      if (!status.complete) throw new FindingsError('the cluster is not fully deployed', { hint: 're-run `kubemix up SPEC` to continue', report: document });
      if (out.json) out.document(document);
    });
}
