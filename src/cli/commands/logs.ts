// `kubemix logs SPEC [HOST]` (or `--state-dir DIR [HOST]`): the per-host logs
// of past runs (secrets already redacted when they were written).
import type { Command } from 'commander';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import { chosenStateDir, statePaths } from '../../exec/state-dir.js';
import { readStateText } from '../../exec/state-file.js';
import { withStateDirOption } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { stateDir } from '../settings.js';
import { loadSpec } from '../spec-arg.js';

/** With a state directory given, the one argument is a host; otherwise SPEC [HOST]. */
function stateAndHost(
  args: readonly string[],
  flag: string | undefined,
  io: CliIo,
): { dir: string; host: string | undefined } {
  const given = chosenStateDir({ flag, env: io.env, cwd: io.cwd });
  if (given !== undefined) {
    if (args.length > 1)
      throw new InputError('flags.invalid', 'with --state-dir (or KUBEMIX_STATE_DIR) give at most one HOST');
    return { dir: given, host: args[0] };
  }
  const [spec, host] = args;
  if (spec === undefined)
    throw new InputError('flags.state-dir', 'kubemix logs needs SPEC, or --state-dir DIR (or KUBEMIX_STATE_DIR)');
  const loaded = loadSpec(spec, {}, io);
  return { dir: stateDir(undefined, io, loaded.clusterName, loaded.file), host };
}

export async function runLogs(args: readonly string[], flag: string | undefined, io: CliIo): Promise<void> {
  const { dir, host } = stateAndHost(args, flag, io);
  const logs = statePaths(dir).logs;
  let files: string[];
  try {
    files = (await readdir(logs)).filter((f) => f.endsWith('.log')).sort();
  } catch {
    throw new InputError('logs.none', `no logs in ${logs}`, {
      path: logs,
      hint: 'run `kubemix up` first, with the same state directory',
    });
  }
  const wanted = host === undefined ? files : files.filter((f) => f === `${host}.log`);
  if (wanted.length === 0)
    throw new InputError('logs.host', `no log for host ${host} in ${logs}`, {
      hint: `hosts with logs: ${files.map((f) => f.slice(0, -4)).join(', ')}`,
    });
  for (const f of wanted) {
    const text = readStateText({
      path: join(logs, f),
      code: 'state.logs',
      hint: "the per-host logs are kubemix's; remove what is not a log file there",
    });
    if (text === undefined) continue;
    io.stdout(
      host === undefined
        ? text
            .split('\n')
            .filter(Boolean)
            .map((l) => `${f.slice(0, -4)} ${l}\n`)
            .join('')
        : text,
    );
  }
}

export function registerLogs(program: Command, io: CliIo): void {
  withStateDirOption(
    program
      .command('logs')
      .description('print the per-host logs of `kubemix up` runs (secrets redacted)')
      .argument('[args...]', 'SPEC [HOST], or only [HOST] with --state-dir'),
  ).action(async (args: string[], flags: { stateDir?: string }) => runLogs(args, flags.stateDir, io));
}
