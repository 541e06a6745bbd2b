// Runs the real executor (applyPlan: scheduler, journal, secret store,
// redaction) over a bundled example's plan against the recording target.
// Concurrency 1 per host and the serial gate make the order deterministic.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPlan, type ApplyResult } from '../../src/exec/apply-plan.js';
import { EventRecorder } from '../../src/exec/recorder.js';
import { resolveModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { assembleResetPlan } from '../../src/plan/reset.js';
import type { Plan } from '../../src/plan/types.js';
import { readSpec } from '../../src/spec/read.js';
import { repoPath } from '../helpers/cli.js';
import { capturedNames, planSecretNames, seedSecrets } from './fake-secrets.js';
import { RecordingTarget, type TraceStep } from './recording-target.js';
import type { GatePriority } from './serial-gate.js';

/** `up` traces the deploy plan, `down` the reset plan. */
export type TracedCommand = 'up' | 'down';

export interface Trace {
  readonly command: TracedCommand;
  readonly example: string;
  readonly priority: GatePriority;
  readonly plan: Plan;
  readonly steps: readonly TraceStep[];
  readonly secretNames: readonly string[];
  readonly stateDir: string;
  readonly result: ApplyResult;
  readonly events: EventRecorder;
}

export function examplePlan(example: string, command: TracedCommand = 'up'): { plan: Plan; contents: Map<string, Buffer> } {
  const path = repoPath('examples', `${example}.yaml`);
  const model = resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
  const { plan, files } = command === 'up' ? assemblePlan(model) : assembleResetPlan(model);
  return { plan, contents: new Map(plan.artifacts.map((a, i) => [a.id, Buffer.from(files[i]?.content ?? '')])) };
}

export async function traceExample(example: string, priority: GatePriority = 'plan-order', command: TracedCommand = 'up'): Promise<Trace> {
  const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-trace-'));
  const { plan, contents } = examplePlan(example, command);
  const secretNames = planSecretNames(plan, contents);
  await seedSecrets(stateDir, secretNames, capturedNames(plan));
  const target = new RecordingTarget(plan, secretNames, priority);
  const events = new EventRecorder();
  const result = await applyPlan(plan, contents, {
    stateDir,
    concurrency: 1,
    retry: { attempts: 1 },
    signal: new AbortController().signal,
    listeners: [target.gate.listener, events.listener],
    transportFor: target.transportFor,
  });
  return { command, example, priority, plan, steps: target.steps, secretNames, stateDir, result, events };
}
