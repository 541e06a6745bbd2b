// Settings precedence: flags > KUBEMIX_* environment > spec > defaults.
import { lstatSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import { directoryPath } from '../exec/local-paths.js';
import { chosenStateDir, resolveStateDir, STATE_DIR_ENV } from '../exec/state-dir.js';
import type { CliIo } from './io.js';
import { Output, isLogLevel, type LogLevel } from './output.js';

export interface GlobalOptions {
  readonly json?: boolean;
  readonly logLevel?: string;
  readonly verbose?: boolean;
  readonly color?: boolean;
}

export function logLevel(opts: GlobalOptions, io: CliIo): LogLevel {
  const wanted = opts.logLevel ?? (opts.verbose === true ? 'debug' : undefined) ?? io.env.KUBEMIX_LOG_LEVEL ?? 'info';
  if (!isLogLevel(wanted)) {
    throw new InputError('flags.log-level', `log level "${wanted}" is not one of error, warn, info, debug`, {
      path: opts.logLevel === undefined ? 'KUBEMIX_LOG_LEVEL' : '--log-level',
    });
  }
  return wanted;
}

export function outputFor(command: Command, io: CliIo): Output {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const color = opts.color !== false && io.env.NO_COLOR === undefined && io.isTty;
  return new Output(io, { json: opts.json === true, level: logLevel(opts, io), color });
}

/**
 * The cluster's state directory: --state-dir > KUBEMIX_STATE_DIR >
 * `.kubemix/<cluster>/` beside the spec file (the working directory for a
 * Kubeinit string). The rules are the executor's (exec/state-dir.ts).
 */
export function stateDir(flag: string | undefined, io: CliIo, cluster: string, specFile: string | undefined): string {
  return stateDirBeside(flag, io, cluster, specFile === undefined ? io.cwd : dirname(resolve(io.cwd, specFile)));
}

/** As stateDir, the default beside `beside`; what is there must be a directory (or nothing, in a folder that exists). */
export function stateDirBeside(flag: string | undefined, io: CliIo, cluster: string, beside: string): string {
  const root = resolveStateDir({ flag, env: io.env, cwd: io.cwd, cluster, beside });
  const chosen = chosenStateDir({ flag, env: io.env, cwd: io.cwd });
  if (chosen !== undefined) {
    // A directory the user named: it, or a new one in a folder that exists (a typo makes no tree of folders).
    const named = flag === undefined ? STATE_DIR_ENV : '--state-dir';
    directoryPath({ flag: named, given: flag ?? root, cwd: io.cwd, code: 'flags.state-dir' }, true);
  } else if (occupied(root)) {
    directoryPath({ flag: '--state-dir (default)', given: root, cwd: io.cwd, code: 'flags.state-dir' }, true);
  }
  return root;
}

/** Whether anything (a directory, a file, a link) is at `path`, or a part of it is a file. */
function occupied(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
