// `kubemix logs --state-dir DIR [HOST]`: the per-host logs of past runs
// (secrets already redacted when they were written).
import type { Command } from 'commander';
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { statePaths } from '../../exec/state-dir.js';
import type { CliIo } from '../io.js';

export async function runLogs(stateDir: string | undefined, host: string | undefined, io: CliIo): Promise<void> {
  const dir = stateDir ?? io.env['KUBEMIX_STATE_DIR'];
  if (dir === undefined || dir === '') throw new InputError('flags.state-dir', 'kubemix logs needs --state-dir DIR (or KUBEMIX_STATE_DIR)');
  const logs = statePaths(resolve(io.cwd, dir)).logs;
  let files: string[];
  try {
    files = (await readdir(logs)).filter((f) => f.endsWith('.log')).sort();
  } catch {
    throw new InputError('logs.none', `no logs in ${logs}`, { path: logs, hint: 'run `kubemix up` first, with the same state directory' });
  }
  const wanted = host === undefined ? files : files.filter((f) => f === `${host}.log`);
  if (wanted.length === 0) throw new InputError('logs.host', `no log for host ${host} in ${logs}`, { hint: `hosts with logs: ${files.map((f) => f.slice(0, -4)).join(', ')}` });
  for (const f of wanted) {
    const text = await readFile(join(logs, f), 'utf8');
    io.stdout(host === undefined ? text.split('\n').filter(Boolean).map((l) => `${f.slice(0, -4)} ${l}\n`).join('') : text);
  }
}

export function registerLogs(program: Command, io: CliIo): void {
  program
    .command('logs')
    .description('print the per-host logs of `kubemix up` runs (secrets redacted)')
    .argument('[host]', 'only this host')
    .option('--state-dir <dir>', 'state directory of the cluster (env KUBEMIX_STATE_DIR)')
    .action(async (host: string | undefined, flags: { stateDir?: string }) => runLogs(flags.stateDir, host, io));
}
