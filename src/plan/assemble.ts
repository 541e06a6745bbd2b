// assemblePlan: model → Plan (tasks in a DAG, artifacts by reference) plus the
// artifact contents to write beside it. Pure and deterministic.
import type { ClusterModel } from '../model/resolve.js';
import { downloadCache, resolveDownload, sha256Refs } from '../model/downloads.js';
import { imagesFromServicesRegistry } from '../model/images.js';
import { sha256Hex } from '../util/json.js';
import { withPlanHash, type PlanBody } from './hash.js';
import { artifactId, artifactLocalPath } from './artifact-path.js';
import { checkGraph } from './graph.js';
import { containerdContribution } from './tasks/containerd.js';
import { driverContribution, nodeReadyIds } from './tasks/driver.js';
import { factTasks } from './tasks/facts.js';
import { clusterReadyTaskIds, kubeadmContribution } from './tasks/kubeadm.js';
import { legacyTokenTasks } from './tasks/kube-proxy-token.js';
import { kubernetesBinariesContribution } from './tasks/kubernetes-binaries.js';
import { linuxPrepContribution } from './tasks/linux-prep.js';
import { registryImagesTask } from './tasks/registry-images.js';
import { servicesContribution } from './tasks/services.js';
import { DEFAULT_WINDOWS_OPTIONS, windowsTasks } from './tasks/windows.js';
import { PLAN_API_VERSION, STAGES, type Artifact, type Command, type Plan, type Stage, type Task } from './types.js';
import type { RenderedArtifact } from '../render/types.js';

/** An artifact with its content and where it lies under the plan directory. */
export type PlanFile = RenderedArtifact & { readonly localPath: string };

export interface AssembledPlan {
  readonly plan: Plan;
  /** Contents of `plan.artifacts`, same order. */
  readonly files: readonly PlanFile[];
  /** The credentials split off the spec's URLs (ClusterModel.urlSecrets): for the executor, never written with the plan. */
  readonly secrets?: Readonly<Record<string, string>>;
}

/**
 * Takes each artifact as soon as its contributor has rendered it (`plan --out`
 * writes it to disk there and then), so the artifact texts of a large cluster
 * are never all held at once. Called in contributor order, not plan order.
 */
export type FileSink = (file: PlanFile) => void;

/** A step that adds tasks and artifacts for one concern (facts, validations, …). */
export type PlanContributor = (model: ClusterModel) => { tasks: Task[]; artifacts?: RenderedArtifact[] };

export const CONTRIBUTORS: readonly PlanContributor[] = [
  (model) => ({ tasks: factTasks(model) }),
  driverContribution,
  (model) =>
    windowsTasks(model, {
      ...DEFAULT_WINDOWS_OPTIONS,
      joinAfter: clusterReadyTaskIds(model),
    }),
  servicesContribution,
  linuxPrepContribution,
  containerdContribution,
  kubernetesBinariesContribution,
  kubeadmContribution,
  (model) => ({ tasks: legacyTokenTasks(model) }),
  (model) => ({ tasks: registryImagesTask(model) }),
];

export function assemblePlan(
  model: ClusterModel,
  contributors: readonly PlanContributor[] = CONTRIBUTORS,
): AssembledPlan {
  const texts = new Map<string, string>();
  const files: PlanFile[] = [];
  const plan = assemblePlanTo(
    model,
    (f) => {
      // One copy of each distinct text: many nodes' artifacts are the same file.
      let content = texts.get(f.content);
      if (content === undefined) texts.set(f.content, (content = f.content));
      files.push(content === f.content ? f : { ...f, content });
    },
    contributors,
  );
  return { plan, files: files.sort((a, b) => compare(a.localPath, b.localPath)), secrets: model.urlSecrets };
}

/**
 * The plan, its artifacts handed to `sink` one contributor at a time instead
 * of returned: what a plan holds of each artifact is its path, mode and SHA-256.
 */
export function assemblePlanTo(
  model: ClusterModel,
  sink: FileSink,
  contributors: readonly PlanContributor[] = CONTRIBUTORS,
): Plan {
  return withPlanHash(assemblePlanBodyTo(model, sink, contributors));
}

/**
 * `assemblePlanTo` without the hash, for a writer that hashes plan.json's
 * pieces as it writes them (`plan --out`) instead of serialising the plan
 * once more for the hash alone.
 */
export function assemblePlanBodyTo(
  model: ClusterModel,
  sink: FileSink,
  contributors: readonly PlanContributor[] = CONTRIBUTORS,
): PlanBody {
  const texts = new SharedTexts();
  const raw: Task[] = [];
  const artifacts: Artifact[] = [];
  const fileRefs = new Set<string>();
  for (const contribute of contributors) {
    const part = contribute(model);
    for (const t of part.tasks) raw.push(texts.task(t));
    for (const a of part.artifacts ?? []) {
      const localPath = artifactLocalPath(a.node, a.remotePath);
      const { sha256, refs } = texts.artifact(a.content);
      refs.forEach((id) => fileRefs.add(id));
      artifacts.push({
        id: artifactId(a.node, a.remotePath),
        node: a.node,
        remotePath: a.remotePath,
        localPath,
        mode: a.mode,
        owner: a.owner,
        sha256,
      });
      sink({ ...a, localPath });
    }
  }
  artifacts.sort((a, b) => compare(a.localPath, b.localPath));
  const ids = downloadIds(raw, fileRefs, texts);
  const tasks = sortTasks(linkTasks(model, raw, ids, texts));
  checkGraph(tasks);
  return {
    apiVersion: PLAN_API_VERSION,
    kind: 'Plan',
    cluster: model.cluster,
    hosts: model.hosts,
    nodes: model.nodes,
    artifacts,
    tasks,
    downloads: ids.map((id) => resolveDownload(model, id)),
    ...(tasks.some((t) => t.pushesImages !== undefined) ? { images: imagesFromServicesRegistry(model) } : {}),
    warnings: model.warnings,
  };
}

/**
 * One copy of each distinct script text (many tasks, per Windows node above
 * all, carry the same script, each built as a string of its own: a plan of
 * 5000 nodes held every copy), and what is computed from a text — its
 * `{{sha256:ID}}` references, an artifact's SHA-256 — computed once per
 * distinct text.
 */
class SharedTexts {
  private readonly seen = new Map<string, string>();
  private readonly refs = new Map<string, readonly string[]>();
  private readonly recentArtifacts = new Map<string, ArtifactFacts>();

  /** The one copy of `text` (the first seen). */
  text(text: string): string {
    const known = this.seen.get(text);
    if (known !== undefined) return known;
    this.seen.set(text, text);
    return text;
  }

  /** The task with its scripts shared (the same object when they already were). */
  task(t: Task): Task {
    const apply = this.command(t.apply);
    const check = t.check === null ? null : this.command(t.check);
    return apply === t.apply && check === t.check ? t : { ...t, apply, check };
  }

  private command(c: Command): Command {
    const script = this.text(c.script);
    return script === c.script ? c : { ...c, script };
  }

  /** Download ids `text` refers to (`text` as returned by `text()`). */
  sha256Refs(text: string): readonly string[] {
    let refs = this.refs.get(text);
    if (refs === undefined) {
      refs = text.includes('{{sha256:') ? sha256Refs(text) : [];
      this.refs.set(text, refs);
    }
    return refs;
  }

  /** Whether a task's scripts name a download. */
  fetches(t: Task): boolean {
    return (
      this.sha256Refs(t.apply.script).length > 0 || (t.check !== null && this.sha256Refs(t.check.script).length > 0)
    );
  }

  /**
   * An artifact text's SHA-256 and download references. Artifact texts are
   * not kept (a plan --out writes them out as it goes), so only the most
   * recent ones are remembered: enough for the files every node shares.
   */
  artifact(text: string): ArtifactFacts {
    let facts = this.recentArtifacts.get(text);
    if (facts !== undefined) {
      this.recentArtifacts.delete(text);
    } else {
      facts = { sha256: sha256Hex(text), refs: text.includes('{{sha256:') ? sha256Refs(text) : [] };
      if (this.recentArtifacts.size >= RECENT_ARTIFACTS) {
        const oldest = this.recentArtifacts.keys().next().value;
        if (oldest !== undefined) this.recentArtifacts.delete(oldest);
      }
    }
    this.recentArtifacts.set(text, facts);
    return facts;
  }
}

interface ArtifactFacts {
  readonly sha256: string;
  readonly refs: readonly string[];
}

/** How many artifact texts' facts are remembered (the files shared by every node are a few dozen). */
const RECENT_ARTIFACTS = 256;

/** Every `{{sha256:ID}}` the tasks' scripts and the artifacts (`fileRefs`) name, sorted. */
function downloadIds(tasks: readonly Task[], fileRefs: ReadonlySet<string>, texts: SharedTexts): string[] {
  const ids = new Set<string>(fileRefs);
  const add = (text: string): void => texts.sha256Refs(text).forEach((id) => ids.add(id));
  for (const t of tasks) {
    if (t.check !== null) add(t.check.script);
    add(t.apply.script);
  }
  return [...ids].sort();
}

/**
 * The edges only the whole plan knows, added in one pass:
 *
 * - A node's first tasks (those that wait for nothing) wait for what the
 *   driver says makes the node ready: its VM answering with its pinned host
 *   key, or the existing host's preflight check.
 * - The services node's cache task learns which files to hold, and every task
 *   that fetches from the cache waits for it: the plan names the downloads
 *   only once all contributors have spoken.
 */
function linkTasks(model: ClusterModel, tasks: readonly Task[], ids: readonly string[], texts: SharedTexts): Task[] {
  const known = new Set(tasks.map((t) => t.id));
  const nodes = new Map(model.nodes.map((n) => [n.name, n]));
  const readyIds = new Map<string, readonly string[]>();
  const cache = downloadCache(model);
  const holder = cache === undefined ? undefined : tasks.find((t) => t.host === cache.node && t.serves !== undefined);
  const serves = holder?.serves === undefined ? undefined : { dir: holder.serves.dir, downloads: ids };
  return tasks.map((t) => {
    let after = t.after;
    const node = nodes.get(t.host);
    if (node !== undefined && after.length === 0) {
      let ready = readyIds.get(node.name);
      if (ready === undefined) readyIds.set(node.name, (ready = nodeReadyIds(model, node)));
      // Never from an earlier stage (the existing host's facts come before its check).
      const stage = STAGES.indexOf(t.stage);
      const first = ready.filter(
        (id) => id !== t.id && known.has(id) && STAGES.indexOf(id.split('/')[0] as Stage) <= stage,
      );
      if (first.length > 0) after = first.sort();
    }
    if (holder === undefined || serves === undefined) return after === t.after ? t : { ...t, after };
    if (t === holder) return { ...t, after, serves };
    if (texts.fetches(t) && !after.includes(holder.id)) after = [...after, holder.id].sort();
    return after === t.after ? t : { ...t, after };
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
