// The plan `kubemix upgrade` runs: one node at a time (or --max-unavailable
// at a time for workers), control-plane nodes first, then the add-ons kubemix
// installed, then Linux workers, then Windows workers. Each node: cordon,
// drain, its host steps (node-steps.ts), wait Ready at the target version,
// the node's underlay cells of verify (node-verify.ts; with --max-unavailable
// above 1, none between two workers of the same wave, which may restart
// together), uncordon; the next node starts only once this one is uncordoned. Pure: the
// model is the target version's (the spec with --to applied).
import { InputError } from '../../errors.js';
import { linuxDistro } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { renderUpgradeKubeadm } from '../../render/kubeadm/config.js';
import { renderProbePatches } from '../../render/kubeadm/patches.js';
import { kubeadmTaskSeconds } from '../../render/kubeadm/timeouts.js';
import { renderKubernetesRepo } from '../../render/linux/kubernetes-repo.js';
import type { RenderedArtifact } from '../../render/types.js';
import { artifactId } from '../artifact-path.js';
import { assemblePlan, type AssembledPlan } from '../assemble.js';
import { powershell, sh, task } from '../task.js';
import { servicesContribution } from '../tasks/services.js';
import { downloadSecrets } from '../../render/windows/downloads.js';
import { registryImagesTask } from '../tasks/registry-images.js';
import type { Task } from '../types.js';
import { addonTasks } from './addons.js';
import { nodeVerifyTasks } from './node-verify.js';
import {
  cordonScripts,
  drainScripts,
  kubeletAtScript,
  readyScripts,
  skewPreflightScript,
  uncordonScripts,
  type CheckAndApply,
} from './api-steps.js';
import {
  IMAGE_PULL_SECONDS,
  linuxImagePull,
  linuxKubeadm,
  linuxKubeadmUpgrade,
  linuxKubelet,
  windowsBinaries,
  windowsBinariesTimeout,
  windowsKubeadmUpgrade,
  windowsServiceOrder,
  windowsStartSteps,
  type Scripts,
} from './node-steps.js';

export const UPGRADE_STAGE = 'task-deploy-cluster';
export const DRAIN_TIMEOUT_SECONDS = 600;
export const READY_TIMEOUT_SECONDS = 300;

export interface UpgradeOptions {
  /** The version the cluster runs now (the spec's, resolved). */
  readonly from: string;
  /** Workers upgraded at once (control-plane nodes always one at a time). */
  readonly maxUnavailable: number;
  /** Plan up to and including this node (`--stop-after NODE`). */
  readonly stopAfter?: string | undefined;
  /** The upgraded spec file's text, for the guard webhook's ConfigMap; undefined: leave the ConfigMap alone. */
  readonly specText?: string | undefined;
}

/** The nodes in upgrade order, in waves: control planes (one each), Linux workers, Windows workers. */
export function upgradeOrder(model: ClusterModel): { readonly nodes: PlanNode[]; readonly width: number }[] {
  const cp = model.nodes.filter((n) => n.role === 'control-plane');
  const linux = model.nodes.filter((n) => n.role === 'worker' && n.osFamily === 'linux');
  const windows = model.nodes.filter((n) => n.role === 'worker' && n.osFamily === 'windows');
  return [
    { nodes: cp, width: 1 },
    { nodes: linux, width: Number.POSITIVE_INFINITY },
    { nodes: windows, width: Number.POSITIVE_INFINITY },
  ];
}

export function assembleUpgradePlan(model: ClusterModel, options: UpgradeOptions): AssembledPlan {
  return assemblePlan(model, [(m) => upgradeContribution(m, options)]);
}

function upgradeContribution(
  model: ClusterModel,
  options: UpgradeOptions,
): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const api = model.nodes.find((n) => n.role === 'control-plane');
  if (api === undefined) return { tasks: [], artifacts: [] };
  const groups = upgradeOrder(model).map((g, i) => ({
    nodes: g.nodes,
    width: i === 0 ? 1 : Math.max(1, options.maxUnavailable),
  }));
  const selected = selectNodes(model, options.stopAfter);
  // Air-gapped: the target's images pushed into the services registry (from `upgrade --images`) and found
  // there before any node is touched, as `up` does before kubeadm init.
  const images = registryImagesTask(model).map((t) => ({ ...t, after: [] }));
  const tasks: Task[] = [...cacheTasks(model), ...images];
  const artifacts: RenderedArtifact[] = [];
  const preflight = task({
    stage: UPGRADE_STAGE,
    host: api.name,
    name: 'upgrade-preflight',
    description: `version skew: the API server at ${options.from} or ${model.versions.kubernetes}, no kubelet newer than the target`,
    check: null,
    apply: sh(skewPreflightScript(options.from, model.versions.kubernetes)),
    timeoutSeconds: 60,
    after: images.map((t) => t.id),
  });
  tasks.push(preflight);
  const pulls = imagePullTasks(model, selected, preflight.id);
  tasks.push(...pulls.values());
  let barrier = [preflight.id];
  for (const [g, group] of groups.entries()) {
    const nodes = group.nodes.filter((n) => selected.has(n.name));
    const ends: string[] = [];
    // Several nodes of a wave at once: another one may be restarting while this one is verified, so the
    // cells between two nodes of the wave are left out (each still checks the control planes and the rest).
    const rolling = new Set(group.width > 1 ? nodes.map((n) => n.name) : []);
    nodes.forEach((node, i) => {
      const previous = i < group.width ? barrier : [ends[i - group.width] ?? ''];
      const skip = new Set([...rolling].filter((n) => n !== node.name));
      const pull = pulls.get(node.name)?.id;
      const chain = nodeChain(
        model,
        api,
        node,
        pull === undefined ? previous : [...previous, pull],
        g === 0 && i === 0,
        skip,
      );
      tasks.push(...chain.tasks);
      artifacts.push(...chain.artifacts);
      ends.push(chain.tasks.at(-1)?.id ?? '');
    });
    if (nodes.length > 0) barrier = ends;
    if (g === 0 && nodes.length === group.nodes.length) {
      const addons = addonTasks(model, api, barrier, options.specText);
      tasks.push(...addons.tasks);
      artifacts.push(...addons.artifacts);
      barrier = [addons.tasks.at(-1)?.id ?? ''];
    }
  }
  return { tasks, artifacts };
}

/**
 * Each selected Linux control plane pulls the target's images once the skew preflight passed, all at once and
 * before the first is cordoned (node-steps.ts linuxImagePull): its cordon waits for its own pull.
 */
function imagePullTasks(model: ClusterModel, selected: ReadonlySet<string>, after: string): Map<string, Task> {
  const scripts = linuxImagePull(model);
  const nodes = model.nodes.filter((n) => selected.has(n.name) && n.role === 'control-plane' && n.osFamily === 'linux');
  return new Map(
    nodes.map((n) => [
      n.name,
      task({
        stage: UPGRADE_STAGE,
        host: n.name,
        name: 'upgrade-images',
        description: `pull kubeadm's images of ${model.versions.kubernetes} before ${n.name} is cordoned`,
        check: sh(scripts.check),
        apply: sh(scripts.apply),
        after: [after],
        timeoutSeconds: IMAGE_PULL_SECONDS,
      }),
    ]),
  );
}

/** Every node up to --stop-after in upgrade order; an unknown or non-upgradable name is refused. */
function selectNodes(model: ClusterModel, stopAfter: string | undefined): Set<string> {
  const order = upgradeOrder(model).flatMap((g) => g.nodes.map((n) => n.name));
  if (stopAfter === undefined) return new Set(order);
  const at = order.indexOf(stopAfter);
  if (at < 0)
    throw new InputError('flags.stop-after', `--stop-after: ${stopAfter} is not a node kubemix upgrades`, {
      path: '--stop-after',
      hint: `nodes in upgrade order: ${order.join(', ')}`,
    });
  return new Set(order.slice(0, at + 1));
}

/** The services node's download cache, told the target's files (assemblePlan fills its list). */
function cacheTasks(model: ClusterModel): Task[] {
  return servicesContribution(model)
    .tasks.filter((t) => t.serves !== undefined)
    .map((t) => ({ ...t, after: [] }));
}

/** The node is the only Linux node CoreDNS (kubernetes.io/os: linux) can run on: evicting it stops cluster DNS. */
export function onlyDnsHome(model: ClusterModel, node: PlanNode): boolean {
  const linux = model.nodes.filter((n) => n.osFamily === 'linux' && n.role !== 'services');
  return linux.length === 1 && linux[0] === node;
}

function nodeChain(
  model: ClusterModel,
  api: PlanNode,
  node: PlanNode,
  after: readonly string[],
  first: boolean,
  skip: ReadonlySet<string>,
): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const v = model.versions.kubernetes;
  const done = kubeletAtScript(node.name, v);
  const onApi = (name: string, description: string, s: CheckAndApply, timeoutSeconds: number) =>
    task({
      stage: UPGRADE_STAGE,
      host: api.name,
      name: `upgrade-${name}-${node.name}`,
      description,
      check: sh(s.check),
      apply: sh(s.apply),
      timeoutSeconds,
    });
  const cordon = onApi('cordon', `cordon ${node.name}`, cordonScripts(node.name, done), 60);
  const drain = onApi(
    'drain',
    `drain ${node.name} through the Eviction API (PodDisruptionBudgets hold), ${DRAIN_TIMEOUT_SECONDS} s at most`,
    drainScripts(node.name, done, DRAIN_TIMEOUT_SECONDS, onlyDnsHome(model, node)),
    DRAIN_TIMEOUT_SECONDS + 60,
  );
  const host = node.osFamily === 'windows' ? windowsSteps(model, node) : linuxSteps(model, node, first);
  // The new kubelet recreates the static pods whose spec it reads differently: on a control plane the API
  // server may restart (run 37: down for minutes on emulated guests), so the wait grows by what the spec adds
  // to kubeadm's own wait for it, as the kubelet's by what it adds to kubeadm's kubelet wait.
  const readySeconds = kubeadmTaskSeconds(
    model.kubeadm,
    [node.role === 'control-plane' ? 'controlPlaneComponentHealthCheck' : 'kubeletHealthCheck'],
    READY_TIMEOUT_SECONDS,
  );
  const ready = onApi(
    'ready',
    `wait until ${node.name} is Ready with kubelet v${v}`,
    readyScripts(node.name, v, readySeconds),
    // Past the deadline one more round (two bounded reads) and the message's two reads: ≤ 40 s beyond it.
    readySeconds + 60,
  );
  const uncordon = onApi('uncordon', `uncordon ${node.name}`, uncordonScripts(node.name), 60);
  const ordered = [cordon, drain, ...host.tasks, ready];
  // Each step waits for the one before it: the order is in the DAG itself.
  const tasks = ordered.map((t, i) => ({ ...t, after: i === 0 ? [...after].sort() : [ordered[i - 1]?.id ?? ''] }));
  // The node's part of verify, every source at once after Ready; uncordon only once all of it passed.
  const verify = nodeVerifyTasks(model, node, UPGRADE_STAGE, 'upgrade', skip).map((t) => ({ ...t, after: [ready.id] }));
  const last = verify.length > 0 ? verify.map((t) => t.id).sort() : [ready.id];
  return { tasks: [...tasks, ...verify, { ...uncordon, after: last }], artifacts: host.artifacts };
}

/** A control plane's upgrade: etcd and its three components replaced one after another, each waited for. */
const UPGRADE_WAITS = [
  'upgradeManifests',
  'upgradeManifests',
  'upgradeManifests',
  'upgradeManifests',
  'etcdAPICall',
  'kubernetesAPICall',
] as const;

function linuxSteps(
  model: ClusterModel,
  node: PlanNode,
  first: boolean,
): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const packages = model.kubernetesInstall === 'packages';
  const repo = renderKubernetesRepo(node, linuxDistro(node.os)?.family ?? 'apt', model.versions.kubernetesMinor);
  const v = model.versions.kubernetes;
  const cached = packages ? [] : downloadSecrets(model);
  const step = (name: string, description: string, s: CheckAndApply, uploads: string[] = [], timeoutSeconds = 900) =>
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name,
      description,
      check: sh(s.check),
      apply: sh(s.apply),
      uploads,
      ...(s.apply.text.includes('{{secret:') ? { secrets: cached } : {}),
      timeoutSeconds,
    });
  const verb = first ? `kubeadm upgrade apply v${v}` : 'kubeadm upgrade node';
  // The spec's timeouts and probe slack, when it sets them, as an UpgradeConfiguration and the init's patches.
  const config = renderUpgradeKubeadm(model, node);
  const slow = config === undefined ? [] : [config, ...renderProbePatches(model, node)];
  // etcd and the three components are replaced one after another, each waited for.
  const waits = node.role === 'control-plane' ? UPGRADE_WAITS : (['kubernetesAPICall'] as const);
  return {
    tasks: [
      packages
        ? step(
            'upgrade-kubeadm',
            `kubeadm ${v} from pkgs.k8s.io v${model.versions.kubernetesMinor}, held`,
            linuxKubeadm(model, node),
            [artifactId(repo.node, repo.remotePath)],
          )
        : step('upgrade-kubeadm', `kubeadm ${v} from the download cache`, linuxKubeadm(model, node)),
      step(
        first ? 'upgrade-apply' : 'upgrade-node',
        verb,
        linuxKubeadmUpgrade(model, node, first, config?.remotePath),
        slow.map((a) => artifactId(a.node, a.remotePath)),
        kubeadmTaskSeconds(model.kubeadm, waits),
      ),
      step(
        'upgrade-kubelet',
        packages
          ? `kubelet and kubectl ${v}, held; restart the kubelet`
          : `kubelet and kubectl ${v} from the download cache; restart the kubelet`,
        linuxKubelet(model, node),
      ),
    ],
    artifacts: [...(packages ? [repo] : []), ...slow],
  };
}

function windowsSteps(model: ClusterModel, node: PlanNode): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const v = model.versions.kubernetes;
  const step = (name: string, description: string, s: Scripts, timeoutSeconds = 900) =>
    task({
      stage: UPGRADE_STAGE,
      host: node.name,
      name,
      description,
      check: powershell(s.check),
      apply: powershell(s.apply),
      secrets: downloadSecrets(model),
      timeoutSeconds,
    });
  return {
    tasks: [
      step(
        'win-upgrade-node',
        `kubeadm.exe ${v} from the download cache; kubeadm upgrade node`,
        windowsKubeadmUpgrade(model),
      ),
      step(
        'win-upgrade-binaries',
        `stop ${[...windowsServiceOrder(model)].reverse().join(', ')}; ${v} binaries from the cache; start ${windowsStartSteps(model).join(' → ')}`,
        windowsBinaries(model),
        windowsBinariesTimeout(model),
      ),
    ],
    artifacts: [],
  };
}
