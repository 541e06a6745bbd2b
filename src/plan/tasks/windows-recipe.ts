// A Windows worker's recipe: which steps, in which order, in which stage,
// with what uploads, secrets and time limits. render/windows writes each
// step's scripts; this module plans them, as plan/tasks/ does for Linux.
//
// The order is the first join's (containerd → kubelet service → the files
// the HostProcess pods read → kubeadm join → the flanneld pod's network → CNI
// config → the kube-proxy pod; flannel needs the Node's pod CIDR, which exists
// only after the join). With Calico: join → calico-node-windows builds the
// network and CNI config → the kube-proxy pod; no External network or CNI
// config of ours. flanneld and kube-proxy are pods with kubelet-renewed,
// per-node tokens: no token is minted, placed or renewed here. Each step waits
// for the one before it; `needs` names earlier steps a step reads the results
// of, so a reordering that breaks one fails the plan instead of the node.
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { CALICO_WINDOWS, windowsRelease } from '../../matrix/index.js';
import { calicoNodeWait } from '../../render/windows/calico.js';
import { download, downloadSecrets } from '../../render/windows/downloads.js';
import { bootOrder } from '../../render/windows/boot.js';
import { defenderExclusions, firewall, firewallRules, ruleLabel } from '../../render/windows/host.js';
import { binaries, containerd, kubeletService } from '../../render/windows/install.js';
import { JOIN_SECRETS, flannelPod, join } from '../../render/windows/join.js';
import { kubeadmTaskSeconds } from '../../render/kubeadm/timeouts.js';
import { registeredName } from '../../render/windows/kubeadm.js';
import { EXTERNAL_NETWORK, hnsNetworkName } from '../../render/windows/network.js';
import { WIN } from '../../render/windows/paths.js';
import { HELPERS_PATH, helpersStep } from '../../render/windows/helpers.js';
import { hostsFile, windowsHostsEntries } from '../../render/windows/hosts.js';
import { containersFeature, externalNetwork, preflight, rebootAfterFeature } from '../../render/windows/prepare.js';
import { cniConfigStep, hostProcessFiles, kubeProxyPod } from '../../render/windows/proxy.js';
import { hostProcessFiles as podFiles } from '../../render/windows/index.js';
import { retireLegacy } from '../../render/windows/retire.js';
import type { WindowsScripts } from '../../render/windows/step.js';
import type { Stage } from '../types.js';
import { oncePer } from '../../util/memo.js';

export interface WindowsOptions {
  /** Defender exclusions for the containerd and kubelet paths; on by default. */
  readonly defenderExclusions: boolean;
}

export const DEFAULT_WINDOWS_OPTIONS: WindowsOptions = { defenderExclusions: true };

/** Tasks outside the node that some of its steps wait for, by id. */
export interface WindowsExternalDeps {
  /** The join waits for these (control plane up, join token minted). */
  readonly join: readonly string[];
}

export interface WindowsStep {
  readonly stage: Stage;
  readonly name: string;
  readonly description: string;
  readonly scripts: WindowsScripts;
  /** Remote paths of artifacts the step needs on the host first. */
  readonly uploads: readonly string[];
  /** Remote paths of artifacts every Windows node shares (one file in the plan, WINDOWS_NODES), uploaded too. */
  readonly sharedUploads?: readonly string[];
  readonly secrets: readonly string[];
  readonly timeoutSeconds: number;
  /** Earlier steps whose results this one reads (checked, not extra edges: the chain already orders them). */
  readonly needs?: readonly string[];
  /** Tasks on other hosts this step waits for, by id, beside the step before it. */
  readonly after?: readonly string[];
  /** The apply reboots the host: the executor waits until the check passes again (Task.reboots). */
  readonly reboots?: true;
}

const PREPARE: Stage = 'task-prepare-cluster';
const DEPLOY: Stage = 'task-deploy-cluster';

type Step = Omit<WindowsStep, 'uploads' | 'secrets'> & { uploads?: readonly string[]; secrets?: readonly string[] };
const step = (s: Step): WindowsStep => ({ ...s, uploads: s.uploads ?? [], secrets: s.secrets ?? [] });

/** Scripts that do not name the node: rendered once per model, one string for every node's task. */
const perModel = (model: ClusterModel, name: string, render: () => WindowsScripts): WindowsScripts =>
  oncePer(model, `windows-recipe:${name}`, render);

/** Steps 1–7: the host, the runtime and the binaries, before the node joins. */
function prepareSteps(
  model: ClusterModel,
  node: PlanNode,
  artifacts: readonly RenderedArtifact[],
  options: WindowsOptions,
): WindowsStep[] {
  const fromImages = model.windowsHostProcess?.fromImages === true;
  const build = windowsRelease(node.os)?.build ?? '';
  const overlay = model.overlay.vxlan !== undefined;
  // The containerd step also places the registry hosts files, and the cluster CA the services registry's TLS chains to.
  const hosts = artifacts.filter((a) => a.remotePath.startsWith(`${WIN.containerdCerts}\\`));
  // …and, air-gapped, the services registry's credential in each upstream registry's hosts.toml.
  const caSecrets = [SECRET_NAMES.clusterCaCert, SECRET_NAMES.registryBasicAuth].filter((name) =>
    hosts.some((a) => a.content.includes(`{{secret:${name}}}`)),
  );
  return [
    // First: every later step's apply dot-sources this file (render/windows/helpers.ts).
    step({
      stage: PREPARE,
      name: 'win-helpers',
      description: `place kubemix's PowerShell helper functions (${HELPERS_PATH}), which the later steps dot-source`,
      scripts: perModel(model, 'helpers', helpersStep),
      sharedUploads: [HELPERS_PATH],
      timeoutSeconds: 60,
    }),
    step({
      stage: PREPARE,
      name: 'win-preflight',
      description: `check build ${build}, name length, disk, RAM, pending reboot and leftovers of an earlier join`,
      scripts: preflight(model, node),
      timeoutSeconds: 120,
    }),
    // Before anything resolves the API or the registry by name (containerd pulls, kubeadm join).
    step({
      stage: PREPARE,
      name: 'win-hosts-file',
      description: `name ${windowsHostsEntries(model)
        .map((e) => e.split(' ')[1])
        .join(' and ')} in the hosts file (a block kubemix owns)`,
      scripts: perModel(model, 'hosts-file', () => hostsFile(model)),
      timeoutSeconds: 60,
    }),
    step({
      stage: PREPARE,
      name: 'win-containers-feature',
      description: 'install the Containers feature',
      scripts: perModel(model, 'containers-feature', containersFeature),
      timeoutSeconds: 900,
    }),
    step({
      stage: PREPARE,
      name: 'win-reboot',
      description: 'reboot to finish the Containers feature, and wait for the host',
      scripts: perModel(model, 'reboot', rebootAfterFeature),
      timeoutSeconds: 900,
      reboots: true,
    }),
    // Calico's node service deletes every non-NAT HNS network at its first start after a boot and makes its own External.
    ...(model.overlay.plugin === 'calico'
      ? []
      : [
          step({
            stage: PREPARE,
            name: 'win-hns-external',
            description: `create the persistent HNS network External ${EXTERNAL_NETWORK.cidr} (${overlay ? `Overlay, VSID ${EXTERNAL_NETWORK.vsid}` : 'L2Bridge'})`,
            scripts: externalNetwork(model, node),
            timeoutSeconds: 180,
            needs: ['win-reboot'],
          }),
        ]),
    step({
      stage: PREPARE,
      name: 'win-containerd',
      description: `install containerd ${download(model, 'containerd.tar.gz').version} with its config.toml, as a service that restarts`,
      scripts: containerd(model, node),
      uploads: [WIN.containerdConfig, ...hosts.map((a) => a.remotePath)],
      secrets: [...new Set([...caSecrets, ...downloadSecrets(model)])].sort(),
      timeoutSeconds: 900,
      needs: ['win-containers-feature', 'win-hosts-file'],
    }),
    // Right after the runtime, before anything large lands on disk: the binaries, then the images the join pulls.
    ...(options.defenderExclusions
      ? [
          step({
            stage: PREPARE,
            name: 'win-defender-exclusions',
            description:
              'exclude containerd and kubelet paths from Defender scanning, before the first downloads and image pulls',
            scripts: perModel(model, 'defender-exclusions', () =>
              defenderExclusions(model.overlay.plugin === 'flannel'),
            ),
            timeoutSeconds: 120,
            needs: ['win-containerd'],
          }),
        ]
      : []),
    step({
      stage: PREPARE,
      name: 'win-binaries',
      description: `download, verify (SHA256) and install ${binariesWhat(model.overlay.plugin === 'calico', fromImages)}`,
      scripts: perModel(model, 'binaries', () => binaries(model)),
      secrets: downloadSecrets(model),
      timeoutSeconds: 1800,
    }),
    step({
      stage: PREPARE,
      name: 'win-kubelet-service',
      description: 'register the kubelet service (absolute paths, kube-log-runner) and the pki link before the join',
      scripts: kubeletService(node),
      timeoutSeconds: 120,
      needs: ['win-binaries'],
    }),
    // The pods start as soon as the node joins: what they read from the host must be there first.
    step({
      stage: PREPARE,
      name: 'win-hostprocess-files',
      description: `place what the ${model.overlay.plugin === 'calico' ? 'kube-proxy' : 'flanneld and kube-proxy'} HostProcess pods start from the host (launchers${model.overlay.plugin === 'calico' ? '' : ', net-conf.json'}, kube-proxy's config template)`,
      scripts: hostProcessFiles(podFiles(model, node)),
      uploads: podFiles(model, node).map((f) => f.remotePath),
      timeoutSeconds: 60,
    }),
  ];
}

/** What the binaries step installs, for its description. */
function binariesWhat(calico: boolean, fromImages: boolean): string {
  const pods = fromImages ? [] : calico ? ['kube-proxy'] : ['kube-proxy', 'flanneld'];
  const list = ['kubelet', 'kubeadm', 'kube-log-runner', ...pods].join(', ');
  if (calico) return `${list} (calico-node-windows brings the CNI plugins)`;
  return `${list} and the CNI plugins${fromImages ? ' (flanneld and kube-proxy come from their images)' : ''}`;
}

/** After the pod network: the kube-proxy pod, then the files of the earlier service mode removed. */
function kubeProxySteps(model: ClusterModel, after: string): WindowsStep[] {
  return [
    step({
      stage: DEPLOY,
      name: 'win-kube-proxy-pod',
      description: `wait for the kube-proxy HostProcess pod to run and sync (kernelspace on ${hnsNetworkName(model.overlay)}; its launcher takes the source VIP at every start)`,
      scripts: perModel(model, 'kube-proxy-pod', () => kubeProxyPod(600)),
      timeoutSeconds: 660,
      needs: [after],
    }),
    step({
      stage: DEPLOY,
      name: 'win-retire-legacy',
      description: `remove what the service mode of earlier kubemix versions left (minted token files, kubeconfigs${model.overlay.plugin === 'calico' ? '' : ', WinSW'}, the old renewal task)`,
      scripts: perModel(model, 'retire-legacy', () => retireLegacy(model.overlay.plugin === 'calico')),
      timeoutSeconds: 120,
      needs: ['win-kube-proxy-pod'],
    }),
  ];
}

/**
 * Calico: join, then wait for calico-node-windows (a HostProcess pod the operator
 * runs) to build the network and write the CNI config, then the kube-proxy pod.
 */
function calicoNetworkSteps(model: ClusterModel, node: PlanNode, deps: WindowsExternalDeps): WindowsStep[] {
  const network = hnsNetworkName(model.overlay);
  return [
    joinStep(model, node, deps),
    step({
      stage: DEPLOY,
      name: 'win-calico-node',
      description: `wait for the calico-node-windows HostProcess pod to create the HNS network ${network}, its endpoint ${CALICO_WINDOWS.hostEndpoint} and ${CALICO_WINDOWS.cniConfName}`,
      scripts: calicoNodeWait(900),
      timeoutSeconds: 960,
      needs: ['win-kubeadm-join'],
    }),
    ...kubeProxySteps(model, 'win-calico-node'),
  ];
}

function joinStep(model: ClusterModel, node: PlanNode, deps: WindowsExternalDeps): WindowsStep {
  return step({
    stage: DEPLOY,
    name: 'win-kubeadm-join',
    description: `join the cluster as ${registeredName(node)} (taints and kubelet settings through JoinConfiguration patches)`,
    scripts: join(node),
    uploads: [WIN.joinConfig, WIN.kubeletPatch],
    secrets: [...JOIN_SECRETS],
    // kubemix's limit, plus what the spec adds to kubeadm's waits during a join.
    timeoutSeconds: kubeadmTaskSeconds(model.kubeadm, ['discovery', 'tlsBootstrap', 'kubeletHealthCheck'], 600),
    needs: ['win-kubelet-service', 'win-hosts-file'],
    after: deps.join,
  });
}

/** After the join: the flanneld pod's network, the CNI config, the kube-proxy pod. */
function networkSteps(model: ClusterModel, node: PlanNode, deps: WindowsExternalDeps): WindowsStep[] {
  const network = hnsNetworkName(model.overlay);
  return [
    joinStep(model, node, deps),
    step({
      stage: DEPLOY,
      name: 'win-flannel-pod',
      description: `wait for the flanneld HostProcess pod to create the HNS network ${network}`,
      scripts: perModel(model, 'flannel-pod', () => flannelPod(model)),
      timeoutSeconds: 960,
      needs: ['win-kubeadm-join', 'win-hostprocess-files'],
    }),
    step({
      stage: DEPLOY,
      name: 'win-cni-config',
      description: `write the only CNI config (network ${network}) once the network exists`,
      scripts: cniConfigStep(model, node),
      uploads: [WIN.cniConf],
      timeoutSeconds: 60,
    }),
    ...kubeProxySteps(model, 'win-cni-config'),
  ];
}

/** Steps 13 and after: the firewall and the boot order. */
function hostSteps(model: ClusterModel): WindowsStep[] {
  const rules = firewallRules(model);
  const calico = model.overlay.plugin === 'calico';
  return [
    step({
      stage: DEPLOY,
      name: 'win-firewall',
      description: `open ${rules.map(ruleLabel).join(', ')} (the firewall stays on)`,
      scripts: perModel(model, 'firewall', () => firewall(model)),
      timeoutSeconds: 120,
    }),
    step({
      stage: DEPLOY,
      name: 'win-boot-order',
      description: calico
        ? 'at boot, with no deadline: containerd, then the kubelet (it runs calico-node-windows, which rebuilds the HNS networks, and the kube-proxy pod); the kubelet restarts on failure'
        : 'at boot, with no deadline: containerd, External network, drop a stale subnet.env, then the kubelet (it runs the flanneld and kube-proxy pods); the kubelet restarts on failure',
      scripts: perModel(model, 'boot-order', bootOrder),
      uploads: [WIN.bootScript],
      timeoutSeconds: 60,
    }),
  ];
}

/** The steps of one Windows worker, in the order they run. */
export function windowsRecipe(
  model: ClusterModel,
  node: PlanNode,
  artifacts: readonly RenderedArtifact[],
  options: WindowsOptions,
  deps: WindowsExternalDeps,
): WindowsStep[] {
  const steps = [
    ...prepareSteps(model, node, artifacts, options),
    ...(model.overlay.plugin === 'calico' ? calicoNetworkSteps(model, node, deps) : networkSteps(model, node, deps)),
    ...hostSteps(model),
  ];
  assertNeedsEarlier(steps);
  return steps;
}

/** Every step a step needs runs before it in the chain; a recipe that breaks this is a kubemix bug. */
export function assertNeedsEarlier(steps: readonly WindowsStep[]): void {
  steps.forEach((s, i) => {
    for (const need of s.needs ?? []) {
      const at = steps.findIndex((x) => x.name === need);
      if (at < 0 || at >= i)
        throw new Error(
          `Windows recipe: ${s.name} needs ${need}, which ${at < 0 ? 'is not in the recipe' : 'runs after it'}`,
        );
    }
  });
}
