import { withHelpersFile } from '../render/windows/helpers.js';
import { withoutUnusedHelpers } from '../render/windows/ps.js';
import type { ShellText } from '../util/escape/index.js';
import type { Command, SecretCapture, Stage, Task } from './types.js';

export interface TaskInput {
  readonly stage: Stage;
  readonly host: string;
  readonly name: string;
  readonly description: string;
  readonly after?: readonly string[];
  readonly check: Command | null;
  readonly apply: Command;
  readonly secrets?: readonly string[];
  readonly uploads?: readonly string[];
  /** Files on the host whose content the executor stores as secrets after apply. */
  readonly captures?: readonly SecretCapture[];
  /** A download cache the executor fills on this host (Task.serves). */
  readonly serves?: { readonly dir: string; readonly downloads: readonly string[] };
  readonly timeoutSeconds?: number;
  /** The apply reboots the host; the executor waits until the check passes again. */
  readonly reboots?: true;
  /** Uploads placed only when the check fails (Task.uploadsOnApply). */
  readonly uploadsOnApply?: true;
  /** The services registry the executor fills before the check (Task.pushesImages). */
  readonly pushesImages?: { readonly registry: string; readonly port: number };
}

export const DEFAULT_TIMEOUT_SECONDS = 300;

export function taskId(stage: Stage, host: string, name: string): string {
  return `${stage}/${host}/${name}`;
}

export function task(input: TaskInput): Task {
  return {
    id: taskId(input.stage, input.host, input.name),
    host: input.host,
    stage: input.stage,
    name: input.name,
    description: input.description,
    after: [...(input.after ?? [])].sort(),
    check: input.check,
    apply: input.apply,
    uploads: [...(input.uploads ?? [])].sort().map((artifact) => ({ artifact })),
    secrets: [...(input.secrets ?? [])].sort(),
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    ...(input.captures === undefined ? {} : { captures: input.captures }),
    ...(input.reboots === undefined ? {} : { reboots: input.reboots }),
    ...(input.serves === undefined ? {} : { serves: input.serves }),
    ...(input.uploadsOnApply === undefined ? {} : { uploadsOnApply: input.uploadsOnApply }),
    ...(input.pushesImages === undefined ? {} : { pushesImages: input.pushesImages }),
  };
}

/**
 * A Linux task's script. Only script text made by `shell` (util/escape) is
 * accepted: every value in it was escaped for where it lands, so no value can
 * be written into a root script with a quote built by hand.
 */
export function sh(script: ShellText, privilege: 'root' | 'user' = 'root'): Command {
  const text = script.text;
  return { shell: 'sh', privilege, script: text.endsWith('\n') ? text : `${text}\n` };
}

/**
 * The last Windows scripts made, by their text: most steps render the same
 * script for every Windows node (only some name the node), so a plan of N
 * nodes prunes each of those once instead of N times, and their tasks share
 * one Command. Least recently used out first, so the recurring scripts stay.
 */
const RECENT_POWERSHELL = new Map<string, Command>();
const RECENT_LIMIT = 256;

/** A Windows task's script: stop at the first error; only the helper functions it calls are sent. */
export function powershell(script: string): Command {
  const known = RECENT_POWERSHELL.get(script);
  if (known !== undefined) {
    RECENT_POWERSHELL.delete(script);
    RECENT_POWERSHELL.set(script, known);
    return known;
  }
  const command = powershellCommand(script);
  if (RECENT_POWERSHELL.size >= RECENT_LIMIT) RECENT_POWERSHELL.delete(RECENT_POWERSHELL.keys().next().value ?? '');
  RECENT_POWERSHELL.set(script, command);
  return command;
}

/**
 * `powershell(script)` made afresh, without looking the text up among the
 * recent ones (which hashes all of it): for a caller that shares the
 * Commands of a script it knows to be shared by other means.
 */
export function powershellCommand(script: string): Command {
  const body = withoutUnusedHelpers(script.endsWith('\n') ? script : `${script}\n`);
  return { shell: 'powershell', privilege: 'root', script: `$ErrorActionPreference = 'Stop'\n${body}` };
}

/**
 * A Windows worker step's apply: as `powershellCommand`, with the helpers the
 * node's helpers file holds dot-sourced from it instead of defined inline
 * (render/windows/helpers.ts). Only for a task that runs after the node's
 * win-helpers task.
 */
export function powershellUsingHelpersFile(script: string): Command {
  const body = withHelpersFile(script.endsWith('\n') ? script : `${script}\n`);
  return { shell: 'powershell', privilege: 'root', script: `$ErrorActionPreference = 'Stop'\n${body}` };
}
