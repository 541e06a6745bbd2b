// Shared set-up for executor tests on real sshd hosts.
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { applyPlan, type ApplyOptions, type ApplyResult } from '../../src/exec/apply-plan.js';
import { EventRecorder } from '../../src/exec/recorder.js';
import type { BuiltPlan } from './plan-builder.js';
import type { TestNet } from './netns.js';

export const FAST = {
  retry: { attempts: 6, baseDelayMs: 200, maxDelayMs: 1000 },
  ssh: { keepaliveIntervalMs: 500, keepaliveCountMax: 3, readyTimeoutMs: 1500 },
} as const;

export function writeKnownHosts(net: TestNet): string {
  const file = join(net.root, 'known_hosts');
  writeFileSync(file, `${net.hosts.map((h) => net.knownHostsLine(h)).join('\n')}\n`);
  return file;
}

export function newStateDir(net: TestNet): string {
  return mkdtempSync(join(net.root, 'state-'));
}

export interface Outcome {
  readonly result?: ApplyResult;
  readonly error?: unknown;
  readonly events: EventRecorder;
}

export async function run(
  built: BuiltPlan,
  stateDir: string,
  knownHostsFile: string,
  extra: Partial<ApplyOptions> = {},
): Promise<Outcome> {
  const events = new EventRecorder();
  try {
    const result = await applyPlan(built.plan, built.contents, {
      stateDir,
      knownHostsFile,
      signal: new AbortController().signal,
      concurrency: 4,
      ...FAST,
      ...extra,
      listeners: [events.listener, ...(extra.listeners ?? [])],
    });
    return { result, events };
  } catch (error) {
    return { error, events };
  }
}

export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}
