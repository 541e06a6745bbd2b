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
import { assembleUpgradePlan } from '../../src/plan/upgrade/assemble.js';
import { assemblePatchPlan } from '../../src/plan/patch/assemble.js';
import type { Plan } from '../../src/plan/types.js';
import type { Fetcher } from '../../src/exec/downloads.js';
import { sha256 } from '../../src/exec/hash.js';
import { DOWNLOAD_IDS } from '../../src/matrix/index.js';
import { readSpec } from '../../src/spec/read.js';
import { repoPath } from '../helpers/cli.js';
import { capturedNames, planSecretNames, seedSecrets } from './fake-secrets.js';
import { RecordingTarget, type TraceStep } from './recording-target.js';
import type { GatePriority } from './serial-gate.js';

/** `up` traces the deploy plan, `down` the reset plan, `upgrade` the 1.35 → 1.36 upgrade plan, `patch` a patch roll. */
export type TracedCommand = 'up' | 'down' | 'upgrade' | 'patch' | 'patch --linux';

/** The upgrade traces: the example's spec at UPGRADE_FROM, upgraded to its own version. */
export const UPGRADE_FROM = '1.35';

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
  /** Download ids the stand-in source served (the deployer fetched), in order. */
  readonly fetched: readonly string[];
}

/**
 * The example's plan. The real release files cannot be had here, so every
 * node download is a stand-in file this harness makes (standInFile), pinned
 * in the spec by its SHA256 as a user would pin a file (`spec.downloads`).
 */
export function examplePlan(
  example: string,
  command: TracedCommand = 'up',
  upgrade: { readonly maxUnavailable?: number; readonly stopAfter?: string } = {},
): { plan: Plan; contents: Map<string, Buffer> } {
  const path = repoPath('examples', `${example}.yaml`);
  const read = readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') });
  const downloads = Object.fromEntries(DOWNLOAD_IDS.map((id) => [id, { sha256: sha256(standInFile(id)) }]));
  const model = resolveModel({ ...read, spec: { ...read.spec, downloads } });
  const { plan, files } =
    command === 'up'
      ? assemblePlan(model)
      : command === 'down'
        ? assembleResetPlan(model)
        : command === 'patch' || command === 'patch --linux'
          ? assemblePatchPlan(model, {
              kbs: [],
              securityOnly: false,
              linux: command === 'patch --linux',
              maxUnavailable: upgrade.maxUnavailable ?? 1,
            })
          : assembleUpgradePlan(model, {
              from: resolveModel({ ...read, spec: { ...read.spec, kubernetesVersion: UPGRADE_FROM } }).versions
                .kubernetes,
              maxUnavailable: upgrade.maxUnavailable ?? 1,
              stopAfter: upgrade.stopAfter,
              specText: readFileSync(path, 'utf8'),
            });
  return { plan, contents: new Map(plan.artifacts.map((a, i) => [a.id, Buffer.from(files[i]?.content ?? '')])) };
}

/** The stand-in for a release file: unmistakably a test file. */
export function standInFile(id: string): Buffer {
  return Buffer.from(`kubemix trace stand-in for ${id}\n`);
}

/** Serves the stand-in for every download URL of the plan, and counts what it served. */
export class StandInSource {
  readonly served: string[] = [];
  constructor(private readonly plan: Plan) {}
  fetcher: Fetcher = async (url) => {
    const d = (this.plan.downloads ?? []).find((x) => x.url === url);
    if (d === undefined) throw new Error(`trace: no download at ${url}`);
    this.served.push(d.id);
    return standInFile(d.id);
  };
}

export async function traceExample(
  example: string,
  priority: GatePriority = 'plan-order',
  command: TracedCommand = 'up',
  reuseStateDir?: string,
  built: { plan: Plan; contents: Map<string, Buffer> } = examplePlan(example, command),
  failing: readonly string[] = [],
): Promise<Trace> {
  const stateDir = reuseStateDir ?? mkdtempSync(join(tmpdir(), 'kubemix-trace-'));
  const { plan, contents } = built;
  const secretNames = planSecretNames(plan, contents);
  if (reuseStateDir === undefined) await seedSecrets(stateDir, secretNames, capturedNames(plan));
  const source = new StandInSource(plan);
  const target = new RecordingTarget(plan, secretNames, priority);
  for (const id of failing) target.failing.add(id);
  const events = new EventRecorder();
  const result = await applyPlan(plan, contents, {
    stateDir,
    concurrency: 1,
    retry: { attempts: 1 },
    signal: new AbortController().signal,
    listeners: [target.gate.listener, events.listener],
    transportFor: target.transportFor,
    downloads: { fetcher: source.fetcher },
  });
  return {
    command,
    example,
    priority,
    plan,
    steps: target.steps,
    secretNames,
    stateDir,
    result,
    events,
    fetched: source.served,
  };
}
