import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { registerLogs } from './logs.js';
import { registerUp } from './up.js';

/** A command module adds its subcommand to the program. */
export type RegisterCommand = (program: Command, io: CliIo) => void;

/** Every subcommand, in the order `kubemix --help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [registerUp, registerLogs];
