// assemblePlan: model → Plan (tasks in a DAG, artifacts by reference) plus the
// artifact contents to write beside it. Pure and deterministic.
import type { ClusterModel } from '../model/resolve.js';
import { downloadCache, resolveDownload, sha256Refs } from '../model/downloads.js';
import { sha256Hex } from '../util/json.js';
import { planHash } from './hash.js';
import { artifactId, artifactLocalPath } from './artifact-path.js';
import { checkGraph } from './graph.js';
import { containerdContribution } from './tasks/containerd.js';
import { driverContribution, nodeReadyIds } from './tasks/driver.js';
import { factTasks } from './tasks/facts.js';
import { clusterReadyTaskIds, kubeadmContribution } from './tasks/kubeadm.js';
import { flannelTokenTaskIds, kubeProxyTokenTaskIds, kubeProxyTokenTasks } from './tasks/kube-proxy-token.js';
import { kubernetesPackagesContribution } from './tasks/kubernetes-packages.js';
import { linuxPrepContribution } from './tasks/linux-prep.js';
import { servicesContribution } from './tasks/services.js';
import { DEFAULT_WINDOWS_OPTIONS, windowsTasks } from './tasks/windows.js';
import { PLAN_API_VERSION, STAGES, type Artifact, type Command, type Plan, type Stage, type Task } from './types.js';
import type { RenderedArtifact } from '../render/types.js';

export interface AssembledPlan {
  readonly plan: Plan;
  /** Contents of `plan.artifacts`, same order. */
  readonly files: readonly (RenderedArtifact & { readonly localPath: string })[];
}

/** A step that adds tasks and artifacts for one concern (facts, validations, …). */
export type PlanContributor = (model: ClusterModel) => { tasks: Task[]; artifacts?: RenderedArtifact[] };

export const CONTRIBUTORS: readonly PlanContributor[] = [
  (model) => ({ tasks: factTasks(model) }),
  driverContribution,
  (model) =>
    windowsTasks(model, {
      ...DEFAULT_WINDOWS_OPTIONS,
      joinAfter: clusterReadyTaskIds(model),
      kubeProxyAfter: kubeProxyTokenTaskIds(model),
      flanneldAfter: flannelTokenTaskIds(model),
    }),
  servicesContribution,
  linuxPrepContribution,
  containerdContribution,
  kubernetesPackagesContribution,
  kubeadmContribution,
  (model) => ({ tasks: kubeProxyTokenTasks(model) }),
];

export function assemblePlan(
  model: ClusterModel,
  contributors: readonly PlanContributor[] = CONTRIBUTORS,
): AssembledPlan {
  const parts = contributors.map((c) => c(model));
  const rendered = parts.flatMap((p) => p.artifacts ?? []);
  const ids = downloadIds(
    parts.flatMap((p) => p.tasks),
    rendered,
  );
  const tasks = sortTasks(
    shareScripts(
      withDownloadCache(
        model,
        waitForNodes(
          model,
          parts.flatMap((p) => p.tasks),
        ),
        ids,
      ),
    ),
  );
  checkGraph(tasks);
  const contents = new Map<string, string>();
  const files = rendered
    .map((a) => ({ ...a, content: shared(contents, a.content), localPath: artifactLocalPath(a.node, a.remotePath) }))
    .sort((a, b) => compare(a.localPath, b.localPath));
  const artifacts: Artifact[] = files.map((f) => ({
    id: artifactId(f.node, f.remotePath),
    node: f.node,
    remotePath: f.remotePath,
    localPath: f.localPath,
    mode: f.mode,
    owner: f.owner,
    sha256: sha256Hex(f.content),
  }));
  const body = {
    apiVersion: PLAN_API_VERSION as typeof PLAN_API_VERSION,
    kind: 'Plan' as const,
    cluster: model.cluster,
    hosts: model.hosts,
    nodes: model.nodes,
    artifacts,
    tasks,
    downloads: ids.map((id) => resolveDownload(model, id)),
    warnings: model.warnings,
  };
  const hash = planHash(body);
  const plan: Plan = {
    apiVersion: body.apiVersion,
    kind: body.kind,
    hash,
    cluster: body.cluster,
    hosts: body.hosts,
    nodes: body.nodes,
    artifacts,
    tasks,
    downloads: body.downloads,
    warnings: body.warnings,
  };
  return { plan, files };
}

/** Every `{{sha256:ID}}` the tasks' scripts and the artifacts name, sorted. */
function downloadIds(tasks: readonly Task[], rendered: readonly RenderedArtifact[]): string[] {
  const texts = [...tasks.flatMap((t) => [t.check?.script ?? '', t.apply.script]), ...rendered.map((a) => a.content)];
  return [...new Set(texts.flatMap(sha256Refs))].sort();
}

/**
 * The services node's cache task learns which files to hold, and every task
 * that fetches from the cache waits for it: the plan names the downloads only
 * once all contributors have spoken.
 */
function withDownloadCache(model: ClusterModel, tasks: readonly Task[], ids: readonly string[]): Task[] {
  const cache = downloadCache(model);
  const holder = cache === undefined ? undefined : tasks.find((t) => t.host === cache.node && t.serves !== undefined);
  if (holder === undefined || holder.serves === undefined) return [...tasks];
  const serves = { dir: holder.serves.dir, downloads: ids };
  return tasks.map((t) => {
    if (t === holder) return { ...t, serves };
    const fetches = sha256Refs(`${t.check?.script ?? ''}\n${t.apply.script}`).length > 0;
    return fetches && !t.after.includes(holder.id) ? { ...t, after: [...t.after, holder.id].sort() } : t;
  });
}

/** The one copy of `text` kept in `seen` (the first seen). */
function shared(seen: Map<string, string>, text: string): string {
  const known = seen.get(text);
  if (known !== undefined) return known;
  seen.set(text, text);
  return text;
}

/**
 * Keeps one copy of each distinct script text: many tasks (per Windows node
 * above all) carry the same script, each built as a string of its own, and a
 * plan of 5000 nodes held every copy. Same values, less memory.
 */
function shareScripts(tasks: readonly Task[]): Task[] {
  const seen = new Map<string, string>();
  const share = (c: Command): Command => ({ ...c, script: shared(seen, c.script) });
  return tasks.map((t) => ({ ...t, apply: share(t.apply), check: t.check === null ? null : share(t.check) }));
}

/**
 * A node's first tasks (those that wait for nothing) wait for what the driver
 * says makes the node ready: its VM answering with its pinned host key, or
 * the existing host's preflight check.
 */
function waitForNodes(model: ClusterModel, tasks: readonly Task[]): Task[] {
  const ids = new Set(tasks.map((t) => t.id));
  const nodes = new Map(model.nodes.map((n) => [n.name, n]));
  return tasks.map((t) => {
    const node = nodes.get(t.host);
    if (node === undefined || t.after.length > 0) return t;
    // Never from an earlier stage (the existing host's facts come before its check).
    const stage = STAGES.indexOf(t.stage);
    const ready = nodeReadyIds(model, node).filter(
      (id) => id !== t.id && ids.has(id) && STAGES.indexOf(id.split('/')[0] as Stage) <= stage,
    );
    return ready.length === 0 ? t : { ...t, after: ready.sort() };
  });
}

function sortTasks(tasks: readonly Task[]): Task[] {
  return [...tasks].sort(
    (a, b) => STAGES.indexOf(a.stage) - STAGES.indexOf(b.stage) || compare(a.host, b.host) || compare(a.id, b.id),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
