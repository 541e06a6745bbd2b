// Settings precedence: flags > KUBEMIX_* environment > spec > defaults.
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import { resolveStateDir } from '../exec/state-dir.js';
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
  const beside = specFile === undefined ? io.cwd : dirname(resolve(io.cwd, specFile));
  return resolveStateDir({ flag, env: io.env, cwd: io.cwd, cluster, beside });
}
