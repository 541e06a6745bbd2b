// Small helpers for the tasks drivers contribute (plan/task.ts turns them
// into plan Tasks with ids).
import type { ShellText } from '../util/escape/index.js';
import type { DriverCommand, TaskRef } from './types.js';

/**
 * A POSIX sh command; scripts end with a newline like every plan command.
 * Only script text made by `shell` (util/escape) is accepted, as in
 * plan/task.ts: every value in it was escaped for where it lands.
 */
export function sh(script: ShellText, privilege: 'root' | 'user' = 'root'): DriverCommand {
  const text = script.text;
  return { shell: 'sh', privilege, script: text.endsWith('\n') ? text : `${text}\n` };
}

export function powershell(script: string): DriverCommand {
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return { shell: 'powershell', privilege: 'root', script: `$ErrorActionPreference = 'Stop'\n${body}` };
}

/** The fact-gathering task every host starts with (plan/tasks/facts.ts). */
export function factsRef(host: string): TaskRef {
  return { stage: 'task-gather-facts', host, name: 'facts' };
}
