// The one entry point and the one top-level error handler. Every command's
// failure ends here and becomes a documented exit code; an unexpected
// exception becomes a crash log and exit 4, never a bare stack trace.
import { createRequire } from 'node:module';
import type * as Commander from 'commander';
import { ExitCode, InputError, InterruptedError, isKubemixError } from '../errors.js';
import { processIo, type CliIo } from './io.js';
import { reportFailure, writeCrashLog } from './failure.js';
import { terminalIo } from './terminal.js';
import { COMMANDS, requestedCommand } from './commands/index.js';
import { VERSION } from '../version.js';

// `require`, not `import`: Node 20 imports a CommonJS package by first scanning its source for export
// names (cjs-module-lexer); commander is loaded by every command, --version included (bench/startup.ts).
const { Command, CommanderError } = createRequire(import.meta.url)('commander') as typeof Commander;
type Command = Commander.Command;
type CommanderError = Commander.CommanderError;

export async function run(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Everything printed goes through the escaping streams (terminal.ts).
  const io = terminalIo(rawIo);
  const program = await buildProgram(argv, io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) return commanderExit(error, argv, io);
    if (io.signal.aborted && !isKubemixError(error)) {
      return reportFailure(new InterruptedError(), argv, io);
    }
    return reportFailure(error, argv, io);
  }
}

/**
 * The program with the one subcommand `argv` runs, loaded on demand; without
 * one, every subcommand as a listing for `--help` (nothing else is loaded).
 */
export async function buildProgram(argv: readonly string[], io: CliIo): Promise<Command> {
  const program = new Command('kubemix')
    .description('Deploy, verify and keep healthy mixed Linux + Windows Kubernetes clusters.')
    .version(VERSION, '-V, --version')
    .option('--json', 'print exactly one JSON document on stdout (NDJSON for event streams)')
    .option('--log-level <level>', 'error | warn | info | debug (env KUBEMIX_LOG_LEVEL)')
    .option('-v, --verbose', 'same as --log-level debug')
    .option('--no-color', 'no colours in diagnostics (also NO_COLOR)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(text),
    });
  const requested = requestedCommand(argv);
  if (requested !== undefined) (await requested.load())(program, io);
  else listCommands(program);
  for (const sub of program.commands) {
    sub.exitOverride().configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    });
  }
  return program;
}

/** Name and description of every subcommand, for `kubemix --help` and unknown-command errors. */
function listCommands(program: Command): void {
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  for (const entry of COMMANDS) program.command(entry.name).description(entry.description);
  const help = program.createHelp();
  program.configureHelp({ subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd) });
}

function commanderExit(error: CommanderError, argv: readonly string[], io: CliIo): number {
  if (error.exitCode === 0) return ExitCode.ok;
  const flagError = new InputError('flags.invalid', error.message.replace(/^error: /, ''), {
    hint: 'run `kubemix <command> --help` for the flags each command takes',
  });
  if (argv.includes('--json')) {
    io.stdout(`${JSON.stringify({ ok: false, error: flagError.toJSON() }, null, 2)}\n`);
  }
  return ExitCode.input;
}

/** The process entry point used by bin/kubemix.js. */
export async function main(argv: readonly string[]): Promise<void> {
  const controller = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(ExitCode.interrupted);
    controller.abort(new InterruptedError());
  });
  const crash = (error: unknown): void => {
    const logPath = writeCrashLog(error);
    process.stderr.write(
      `kubemix crashed (internal error). Crash log: ${logPath}\nPlease report this at the kubemix issue tracker with the crash log.\n`,
    );
    process.exit(ExitCode.internal);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  process.exitCode = await run(argv, processIo(controller.signal));
}
