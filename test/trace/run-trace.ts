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
import type { Plan } from '../../src/plan/types.js';
import { readSpec } from '../../src/spec/read.js';
import { repoPath } from '../helpers/cli.js';
import { capturedNames, planSecretNames, seedSecrets } from './fake-secrets.js';
import { RecordingTarget, type TraceStep } from './recording-target.js';
import type { GatePriority } from './serial-gate.js';

export interface Trace {
  readonly example: string;
  readonly priority: GatePriority;
  readonly plan: Plan;
  readonly steps: readonly TraceStep[];
  readonly secretNames: readonly string[];
  readonly stateDir: string;
  readonly result: ApplyResult;
  readonly events: EventRecorder;
}

export function examplePlan(example: string): { plan: Plan; contents: Map<string, Buffer> } {
  const path = repoPath('examples', `${example}.yaml`);
  const { plan, files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') })));
  return { plan, contents: new Map(plan.artifacts.map((a, i) => [a.id, Buffer.from(files[i]?.content ?? '')])) };
}

export async function traceExample(example: string, priority: GatePriority = 'plan-order'): Promise<Trace> {
  const stateDir = mkdtempSync(join(tmpdir(), 'kubemix-trace-'));
  const { plan, contents } = examplePlan(example);
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
  return { example, priority, plan, steps: target.steps, secretNames, stateDir, result, events };
}
