// A Windows worker's recipe: which steps, in which order, in which stage,
// with what uploads, secrets and time limits. render/windows writes each
// step's scripts; this module plans them, as plan/tasks/ does for Linux.
//
// The order is the first join's (containerd → kubelet service → kubeadm join
// → flanneld → CNI config → source VIP → kube-proxy; flannel needs the Node's
// pod CIDR, which exists only after the join). With Calico: join →
// calico-node-windows builds the network and CNI config → source VIP from its
// endpoint → kube-proxy; no External network or CNI config of ours. Each step waits for the one
// before it; `needs` names earlier steps a step reads the results of, so a
// reordering that breaks one fails the plan instead of the node.
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { CALICO_WINDOWS, windowsRelease } from '../../matrix/index.js';
import { calicoNodeWait, calicoSourceVip } from '../../render/windows/calico.js';
import { download, downloadSecrets } from '../../render/windows/downloads.js';
import { bootOrder } from '../../render/windows/boot.js';
import { defenderExclusions, firewall, firewallRules } from '../../render/windows/host.js';
import { binaries, containerd, kubeletService } from '../../render/windows/install.js';
import { JOIN_SECRETS, flannelPod, flanneld, join } from '../../render/windows/join.js';
import { kubeadmTaskSeconds } from '../../render/kubeadm/timeouts.js';
import { registeredName } from '../../render/windows/kubeadm.js';
import { EXTERNAL_NETWORK, hnsNetworkName } from '../../render/windows/network.js';
import { WIN } from '../../render/windows/paths.js';
import { HELPERS_PATH, helpersStep } from '../../render/windows/helpers.js';
import { hostsFile, windowsHostsEntries } from '../../render/windows/hosts.js';
import { containersFeature, externalNetwork, preflight, rebootAfterFeature } from '../../render/windows/prepare.js';
import { cniConfigStep, kubeProxy, kubeProxyConfig, sourceVip } from '../../render/windows/proxy.js';
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
  /** kube-proxy waits for these (its ServiceAccount token minted), native service or HostProcess pod alike. */
  readonly kubeProxy: readonly string[];
  /** The flanneld service waits for these (its ServiceAccount token minted). */
  readonly flanneld: readonly string[];
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
  hostProcess: boolean,
  options: WindowsOptions,
): WindowsStep[] {
  const build = windowsRelease(node.os)?.build ?? '';
  const overlay = model.overlay.vxlan !== undefined;
  // The containerd step also places the registry hosts files, and the cluster CA the services registry's TLS chains to.
  const hosts = artifacts.filter((a) => a.remotePath.startsWith(`${WIN.containerdCerts}\\`));
  const caSecrets = hosts.some((a) => a.content.includes(`{{secret:${SECRET_NAMES.clusterCaCert}}}`))
    ? [SECRET_NAMES.clusterCaCert]
    : [];
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
      description:
        model.overlay.plugin === 'calico'
          ? 'download, verify (SHA256) and install kubelet, kubeadm, kube-proxy and kube-log-runner (calico-node-windows brings the CNI plugins)'
          : hostProcess
            ? 'download, verify (SHA256) and install kubelet, kubeadm, kube-log-runner and the CNI plugins (flanneld and kube-proxy come from their images)'
            : 'download, verify (SHA256) and install kubelet, kubeadm, kube-proxy, kube-log-runner, flanneld, WinSW and the CNI plugins',
      scripts: perModel(model, 'binaries', () => binaries(model, hostProcess)),
      secrets: downloadSecrets(model),
      timeoutSeconds: 1800,
    }),
    // HostProcess: the flannel pod starts as soon as the node joins, so its net-conf.json must already be there.
    step({
      stage: PREPARE,
      name: 'win-kubelet-service',
      description: 'register the kubelet service (absolute paths, kube-log-runner) and the pki link before the join',
      scripts: kubeletService(node),
      uploads: hostProcess ? [WIN.flannelNetConf] : [],
      timeoutSeconds: 120,
      needs: ['win-binaries'],
    }),
  ];
}

/**
 * Calico: join, then wait for calico-node-windows (a HostProcess pod the operator
 * runs) to build the network and write the CNI config, take the source VIP from
 * its host endpoint, then kube-proxy as a service on the network Calico made.
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
    step({
      stage: DEPLOY,
      name: 'win-source-vip',
      description: `take kube-proxy's source VIP from Calico's host endpoint ${CALICO_WINDOWS.hostEndpoint}`,
      scripts: calicoSourceVip(),
      timeoutSeconds: 120,
      needs: ['win-calico-node'],
    }),
    step({
      stage: DEPLOY,
      name: 'win-kube-proxy',
      description: `run kube-proxy (kernelspace on ${network}, source VIP from Calico's endpoint) with a private kubeconfig and ServiceAccount token`,
      scripts: kubeProxy(model),
      uploads: [WIN.kubeProxyKubeconfig, WIN.kubeProxyConfigTemplate],
      secrets: [SECRET_NAMES.kubeProxyWindowsToken],
      timeoutSeconds: 300,
      needs: ['win-source-vip'],
      after: deps.kubeProxy,
    }),
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

/** Steps 8–12: join, then flannel's network, the CNI config, the source VIP and kube-proxy. */
function networkSteps(
  model: ClusterModel,
  node: PlanNode,
  hostProcess: boolean,
  deps: WindowsExternalDeps,
): WindowsStep[] {
  const network = hnsNetworkName(model.overlay);
  const overlay = model.overlay.vxlan !== undefined;
  const cni = step({
    stage: DEPLOY,
    name: 'win-cni-config',
    description: `write the only CNI config (network ${network}) after flanneld`,
    scripts: cniConfigStep(model, node),
    uploads: [WIN.cniConf],
    timeoutSeconds: 60,
  });
  const flannel = hostProcess
    ? [
        cni,
        step({
          stage: DEPLOY,
          name: 'win-flannel-pod',
          description: `wait for the flannel HostProcess pod to create the HNS network ${network}`,
          scripts: perModel(model, 'flannel-pod', () => flannelPod(model)),
          timeoutSeconds: 960,
          needs: ['win-kubeadm-join'],
        }),
      ]
    : [
        step({
          stage: DEPLOY,
          name: 'win-flanneld',
          description: `run flanneld under WinSW as ${registeredName(node)}; it creates the HNS network ${network}`,
          scripts: flanneld(model, node),
          uploads: [WIN.flannelNetConf, WIN.flanneldServiceXml, WIN.flanneldKubeconfig],
          // Its own ServiceAccount token (flannel-windows), minted by the executor: never the kubelet's credential.
          secrets: [SECRET_NAMES.flannelWindowsToken],
          timeoutSeconds: 300,
          needs: ['win-kubeadm-join'],
          after: deps.flanneld,
        }),
        cni,
      ];
  const proxyFiles = [WIN.kubeProxyKubeconfig, WIN.kubeProxyConfigTemplate];
  const proxy = hostProcess
    ? step({
        stage: DEPLOY,
        name: 'win-kube-proxy-config',
        description: `kube-proxy's config (kernelspace on ${network}) and private kubeconfig for its HostProcess pod`,
        scripts: perModel(model, 'kube-proxy-config', () => kubeProxyConfig(model)),
        uploads: proxyFiles,
        secrets: [SECRET_NAMES.kubeProxyWindowsToken],
        timeoutSeconds: 120,
        after: deps.kubeProxy,
      })
    : step({
        stage: DEPLOY,
        name: 'win-kube-proxy',
        description: `run kube-proxy (kernelspace on ${network}${overlay ? ', source VIP from the node' : ''}) with a private kubeconfig and ServiceAccount token`,
        scripts: perModel(model, 'kube-proxy', () => kubeProxy(model)),
        uploads: proxyFiles,
        secrets: [SECRET_NAMES.kubeProxyWindowsToken],
        timeoutSeconds: 300,
        needs: ['win-cni-config'],
        after: deps.kubeProxy,
      });
  return [
    joinStep(model, node, deps),
    ...flannel,
    // The source VIP is reserved on the network flanneld made; kube-proxy reads it from the node.
    ...(overlay
      ? [
          step({
            stage: DEPLOY,
            name: 'win-source-vip',
            description: `reserve kube-proxy's source VIP on ${network} with host-local, at run time`,
            scripts: perModel(model, 'source-vip', () => sourceVip(model)),
            timeoutSeconds: 120,
            needs: [hostProcess ? 'win-flannel-pod' : 'win-flanneld'],
          }),
        ]
      : []),
    { ...proxy, needs: [...(proxy.needs ?? []), ...(overlay ? ['win-source-vip'] : [])] },
  ];
}

/** Steps 13 and after: the firewall and the boot order. */
function hostSteps(model: ClusterModel, hostProcess: boolean): WindowsStep[] {
  const rules = firewallRules(model);
  const calico = model.overlay.plugin === 'calico';
  return [
    step({
      stage: DEPLOY,
      name: 'win-firewall',
      description: `open ${rules.map((r) => `${r.port}/${r.protocol.toLowerCase()}`).join(', ')} (the firewall stays on)`,
      scripts: perModel(model, 'firewall', () => firewall(model)),
      timeoutSeconds: 120,
    }),
    step({
      stage: DEPLOY,
      name: 'win-boot-order',
      description: calico
        ? "at boot, with no deadline: containerd, the kubelet (it runs calico-node-windows, which rebuilds the HNS networks), wait for Calico's network, then kube-proxy with the source VIP read again; services restart on failure"
        : hostProcess
          ? 'at boot, with no deadline: containerd, External network, drop a stale subnet.env, then the kubelet (it runs the flannel and kube-proxy pods); services restart on failure'
          : 'at boot, with no deadline: containerd, External network, drop a stale subnet.env, wait for the API, flanneld until the network is ready, then kubelet and kube-proxy; services restart on failure',
      scripts: perModel(model, 'boot-order', () => bootOrder(hostProcess, calico)),
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
  const hostProcess = model.windowsHostProcess !== undefined;
  const steps = [
    ...prepareSteps(model, node, artifacts, hostProcess, options),
    ...(model.overlay.plugin === 'calico'
      ? calicoNetworkSteps(model, node, deps)
      : networkSteps(model, node, hostProcess, deps)),
    ...hostSteps(model, hostProcess),
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
