// Small helpers for the tasks drivers contribute (plan/task.ts turns them
// into plan Tasks with ids).
import type { ShellText } from '../util/escape/index.js';
import type { DriverCommand, TaskRef } from './types.js';

function shCommand(text: string, privilege: 'root' | 'user'): DriverCommand {
  return { shell: 'sh', privilege, script: text.endsWith('\n') ? text : `${text}\n` };
}

/**
 * A POSIX sh command; scripts end with a newline like every plan command.
 * Only script text made by `shell` (util/escape) is accepted, as in
 * plan/task.ts: every value in it was escaped for where it lands.
 */
export function sh(script: ShellText, privilege: 'root' | 'user' = 'root'): DriverCommand {
  return shCommand(script.text, privilege);
}

/**
 * The libvirt driver's scripts, still built as strings with every value put
 * through shellQuote (as `q`): not yet on the `shell` template (issue #31).
 * No other driver may use it; new driver scripts use `sh`.
 */
export function shQuotedByHand(script: string, privilege: 'root' | 'user' = 'root'): DriverCommand {
  return shCommand(script, privilege);
}

export function powershell(script: string): DriverCommand {
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return { shell: 'powershell', privilege: 'root', script: `$ErrorActionPreference = 'Stop'\n${body}` };
}

/** The fact-gathering task every host starts with (plan/tasks/facts.ts). */
export function factsRef(host: string): TaskRef {
  return { stage: 'task-gather-facts', host, name: 'facts' };
}
