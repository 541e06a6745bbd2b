// `kubemix patch`, check first, then act: the patch query runs on every
// selected node (its own journal under <state>/patch-query, cleared before,
// so every run asks afresh), and only the nodes with something pending go
// into the roll. The roll's node list is kept in <state>/patch/roll.json
// while it is under way: a re-run after an interruption resumes that roll
// (the journal skips what is done) instead of asking again — a node already
// updated would then look clean and be left cordoned. A roll that fails
// names the nodes it leaves cordoned, what was installed on each and how to
// roll it back (rollback.ts), from the query's answer kept in roll.json. A
// node the failed roll cordoned but installed nothing on (its drain did not
// finish, or its update step failed before anything was installed: the
// step's error says so, render/windows/updates.ts NOTHING_INSTALLED) is
// uncordoned and taken out of the roll, so neither this failure nor a
// resumed roll leaves it out of service for nothing.
import { rm } from 'node:fs/promises';
import { z } from 'zod';
import { readStateJson } from '../exec/state-file.js';
import { join } from 'node:path';
import { HostError } from '../errors.js';
import { applyPlan, type ApplyOptions } from '../exec/apply-plan.js';
import { ensurePrivateDir, writeFileDurable } from '../exec/durable.js';
import type { ExecEvent } from '../exec/events.js';
import { readJournal } from '../exec/journal.js';
import { statePaths } from '../exec/state-dir.js';
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import type { AssembledPlan } from '../plan/assemble.js';
import { assemblePatchPlan, assembleUncordonPlan, patchedNodes, type PatchOptions } from '../plan/patch/assemble.js';
import { assemblePatchQueryPlan, needsPatch, parsePending, type NodePending } from '../plan/patch/query.js';
import { rollbackText } from '../plan/patch/rollback.js';
import { NOTHING_INSTALLED, type UpdateSelection } from '../render/windows/updates.js';

/** How the query reaches hosts: applyPlan's options without the state directory and --check. */
export type QueryOptions = Omit<ApplyOptions, 'stateDir' | 'check'>;

export interface PatchRun {
  /** The cluster's state directory. */
  readonly stateDir: string;
  readonly query: QueryOptions;
  /** Runs the roll's plan with the given state directory (the CLI draws its events). */
  readonly runRoll: (plan: AssembledPlan, stateDir: string) => Promise<void>;
}

export interface PatchResult {
  readonly pending: ReadonlyMap<string, NodePending>;
  /** The nodes rolled, in order; empty when nothing was pending. */
  readonly rolled: readonly string[];
  /** An interrupted roll was resumed (no query ran). */
  readonly resumed: boolean;
}

const ROLL_FILE = 'roll.json';

export function patchStateDir(stateDir: string): string {
  return join(stateDir, 'patch');
}

/** Runs the patch query on `nodes`; every node must answer (a silent node is a HostError, exit 3). */
export async function queryPending(
  model: ClusterModel,
  nodes: readonly PlanNode[],
  selection: UpdateSelection,
  stateDir: string,
  options: QueryOptions,
): Promise<Map<string, NodePending>> {
  const { plan } = assemblePatchQueryPlan(model, nodes, selection);
  const own = join(stateDir, 'patch-query');
  await rm(statePaths(own).journal, { force: true });
  const lines = new Map<string, string[]>(nodes.map((n) => [n.name, []]));
  const collect = (e: ExecEvent): void => {
    if (e.type === 'task:output' && e.stream === 'stdout') lines.get(e.host)?.push(e.line);
  };
  try {
    await applyPlan(plan, new Map(), {
      ...options,
      knownHostsFile: options.knownHostsFile ?? statePaths(stateDir).knownHosts,
      stateDir: own,
      listeners: [collect, ...(options.listeners ?? [])],
    });
  } catch (error) {
    if (error instanceof HostError)
      throw new HostError('patch.query-failed', `the patch query did not finish: ${error.message}`, {
        hint: 'nothing was cordoned or installed; fix the connection and run patch again',
        cause: error,
      });
    throw error;
  } finally {
    await rm(statePaths(own).logs, { recursive: true, force: true });
  }
  return new Map([...lines].map(([node, l]) => [node, parsePending(l)]));
}

interface RollFile {
  readonly nodes: string[];
  /** The query's answer for the roll's nodes: what a rollback names. */
  readonly pending: Record<string, NodePending>;
}

const PENDING_SCHEMA = z.looseObject({ updates: z.array(z.unknown()), rebootRequired: z.boolean() });

async function rollUnderWay(dir: string): Promise<RollFile | undefined> {
  const doc = readStateJson({
    path: join(dir, ROLL_FILE),
    schema: z.object({ nodes: z.array(z.string()), pending: z.record(z.string(), PENDING_SCHEMA).optional() }),
    code: 'patch.roll-file',
    hint: 'it records the nodes of an unfinished roll; uncordon them by hand and remove it to start afresh',
  });
  return doc === undefined
    ? undefined
    : { nodes: doc.nodes, pending: (doc.pending ?? {}) as Record<string, NodePending> };
}

/** Query, then roll only the nodes with something pending (or resume an interrupted roll). */
export async function patchNodes(model: ClusterModel, options: PatchOptions, run: PatchRun): Promise<PatchResult> {
  const own = patchStateDir(run.stateDir);
  const selected = patchedNodes(model, options.nodes, options.linux === true);
  const underWay = await rollUnderWay(own);
  if (underWay !== undefined) {
    // The roll as it was started, whatever --nodes says now: its nodes may be cordoned.
    const all = new Set(patchedNodes(model, undefined, true).map((n) => n.name));
    const roll = underWay.nodes.filter((n) => all.has(n));
    const plan = assemblePatchPlan(model, { ...options, nodes: undefined, linux: true, roll: new Set(roll) });
    await rollOrExplain(model, plan, own, { ...underWay, nodes: roll }, run);
    await finishRoll(own);
    return { pending: new Map(), rolled: roll, resumed: true };
  }
  const pending = await queryPending(model, selected, options, run.stateDir, run.query);
  const roll = selected.filter((n) => needsPatch(pending.get(n.name))).map((n) => n.name);
  if (roll.length === 0) return { pending, rolled: [], resumed: false };
  const assembled = assemblePatchPlan(model, { ...options, roll: new Set(roll) });
  await ensurePrivateDir(own);
  const file: RollFile = { nodes: roll, pending: Object.fromEntries(roll.map((n) => [n, pending.get(n) ?? none])) };
  await writeFileDurable(join(own, ROLL_FILE), `${JSON.stringify(file)}\n`);
  await rollOrExplain(model, assembled, own, file, run);
  await finishRoll(own);
  return { pending, rolled: roll, resumed: false };
}

const none: NodePending = { updates: [], rebootRequired: false };

/**
 * Runs the roll; when it fails, uncordons the nodes it left cordoned with
 * nothing installed (and takes them out of the roll), then adds to the error
 * the nodes left cordoned and how to roll each back.
 */
async function rollOrExplain(
  model: ClusterModel,
  assembled: AssembledPlan,
  own: string,
  roll: RollFile,
  run: PatchRun,
): Promise<void> {
  const pending = new Map(Object.entries(roll.pending));
  try {
    await run.runRoll(assembled, own);
  } catch (error) {
    if (!(error instanceof HostError)) throw error;
    const left = await leftCordoned(model, assembled, own);
    if (left.length === 0) throw error;
    const idle = left.filter((l) => !l.installed).map((l) => l.node.name);
    const released = idle.length === 0 ? [] : await uncordonIdle(model, own, roll, idle, run);
    const text = left.map(({ node, installed }) =>
      released.includes(node.name)
        ? `${node.name}: nothing was installed on it; it was uncordoned and left out of this roll (the next patch run asks it again).`
        : rollbackText(node, pending.get(node.name), installed),
    );
    throw new HostError('patch.node-unhealthy', `${error.message}\n${text.join('\n')}`, {
      hint: 'the roll stopped here: no later node was touched',
      cause: error,
    });
  }
}

/**
 * Uncordons `nodes` (its own journal, so the roll's stays as it was) and
 * writes roll.json without them: a resumed roll must not find their cordon
 * done and install on a node that is back in service. Returns the nodes
 * uncordoned; none when the uncordon itself fails (they stay cordoned, named).
 */
async function uncordonIdle(
  model: ClusterModel,
  own: string,
  roll: RollFile,
  nodes: readonly string[],
  run: PatchRun,
): Promise<string[]> {
  const dir = join(own, 'uncordon');
  try {
    await ensurePrivateDir(dir);
    await rm(statePaths(dir).journal, { force: true });
    await run.runRoll(assembleUncordonPlan(model, nodes), dir);
  } catch (error) {
    if (error instanceof HostError) return [];
    throw error;
  }
  const rest: RollFile = {
    nodes: roll.nodes.filter((n) => !nodes.includes(n)),
    pending: Object.fromEntries(Object.entries(roll.pending).filter(([n]) => !nodes.includes(n))),
  };
  if (rest.nodes.length === 0) await finishRoll(own);
  else await writeFileDurable(join(own, ROLL_FILE), `${JSON.stringify(rest)}\n`);
  return [...nodes];
}

/**
 * The roll's nodes its journal shows cordoned and not uncordoned, and
 * whether anything may have been installed on them: their updates step ran
 * and did not fail saying nothing was installed.
 */
async function leftCordoned(
  model: ClusterModel,
  assembled: AssembledPlan,
  own: string,
): Promise<{ node: PlanNode; installed: boolean }[]> {
  const journal = await readJournal(own);
  const state = (name: string): string | undefined => {
    const t = assembled.plan.tasks.find((x) => x.name === name);
    return t === undefined ? undefined : journal?.tasks[t.id]?.state;
  };
  const ran = (s: string | undefined): boolean => s === 'done' || s === 'failed' || s === 'running';
  return model.nodes.flatMap((node) => {
    if (state(`patch-cordon-${node.name}`) !== 'done' || state(`patch-uncordon-${node.name}`) === 'done') return [];
    const updates = assembled.plan.tasks.find(
      (t) => t.host === node.name && (t.name === 'win-updates' || t.name === 'linux-updates'),
    );
    const entry = updates === undefined ? undefined : journal?.tasks[updates.id];
    const nothing = entry?.state === 'failed' && (entry.error ?? '').includes(NOTHING_INSTALLED);
    return [{ node, installed: ran(entry?.state) && !nothing }];
  });
}

/** The roll is through: next month's run asks afresh. */
async function finishRoll(own: string): Promise<void> {
  await rm(statePaths(own).journal, { force: true });
  await rm(join(own, ROLL_FILE), { force: true });
}
