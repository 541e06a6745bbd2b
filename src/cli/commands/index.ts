import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { registerAddNode } from './add-node.js';
import { registerDown } from './down.js';
import { registerGuard } from './guard/index.js';
import { registerInit } from './init.js';
import { registerInventory } from './inventory.js';
import { registerKubeconfig } from './kubeconfig.js';
import { registerLint } from './lint.js';
import { registerLogs } from './logs.js';
import { registerPlan } from './plan.js';
import { registerRoutes } from './routes.js';
import { registerStatus } from './status.js';
import { registerTopology } from './topology.js';
import { registerUp } from './up.js';
import { registerValidate } from './validate.js';

/** A command module adds its subcommand to the program. */
export type RegisterCommand = (program: Command, io: CliIo) => void;

/** Every subcommand, in the order `kubemix --help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [
  registerValidate,
  registerPlan,
  registerInit,
  registerUp,
  registerDown,
  registerAddNode,
  registerStatus,
  registerLogs,
  registerKubeconfig,
  registerLint,
  registerGuard,
  registerInventory,
  registerRoutes,
  registerTopology,
];
