// Small helpers for the tasks drivers contribute (plan/task.ts turns them
// into plan Tasks with ids).
import type { DriverCommand, TaskRef } from './types.js';

/** A POSIX sh command; scripts end with a newline like every plan command. */
export function sh(script: string, privilege: 'root' | 'user' = 'root'): DriverCommand {
  return { shell: 'sh', privilege, script: script.endsWith('\n') ? script : `${script}\n` };
}

export function powershell(script: string): DriverCommand {
  const body = script.endsWith('\n') ? script : `${script}\n`;
  return { shell: 'powershell', privilege: 'root', script: `$ErrorActionPreference = 'Stop'\n${body}` };
}

/** The fact-gathering task every host starts with (plan/tasks/facts.ts). */
export function factsRef(host: string): TaskRef {
  return { stage: 'task-gather-facts', host, name: 'facts' };
}
