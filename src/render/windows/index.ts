// renderWindowsNode: model + Windows node → the files it needs and the steps,
// in the order a first join must run them (REFERENCE.md §4, issue 4). Pure.
import type { ClusterModel } from '../../model/resolve.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { hostProcessImages } from '../manifests/windows-hostprocess.js';
import { containerdConfig, registryHosts } from './containerd.js';
import { bootOrder, bootScript, defenderExclusions, firewall } from './host.js';
import { binaries, containerd, kubeletService } from './install.js';
import { flannelPod, flanneld, join } from './join.js';
import { joinConfiguration, kubeletPatch } from './kubeadm.js';
import { cniConfig, netConfJson } from './network.js';
import { WIN } from './paths.js';
import { containersFeature, externalNetwork, preflight, rebootAfterFeature } from './prepare.js';
import { cniConfigStep, kubeProxy, kubeProxyConfig, sourceVip } from './proxy.js';
import { resetScript } from './reset.js';
import { flanneldKubeconfig, flanneldServiceXml, forbiddenFor, kubeProxyConfigTemplate, kubeProxyKubeconfig } from './services.js';
import type { WindowsStep } from './step.js';
import { renderUnattend, UNATTEND_MEDIA } from './unattend.js';
import { setupCompleteCmd, setupScript } from './unattend-setup.js';

export interface WindowsOptions {
  /** Defender exclusions for containerd and kubelet paths (seed 004); on by default. */
  readonly defenderExclusions: boolean;
}

export const DEFAULT_WINDOWS_OPTIONS: WindowsOptions = { defenderExclusions: true };

export interface WindowsNodeRender {
  readonly artifacts: RenderedArtifact[];
  readonly steps: WindowsStep[];
}

export function renderWindowsNode(model: ClusterModel, node: PlanNode, options: WindowsOptions = DEFAULT_WINDOWS_OPTIONS): WindowsNodeRender {
  // HostProcess mode: flanneld and kube-proxy run as pods (manifests/windows-hostprocess.yaml), not services.
  const hostProcess = hostProcessImages(model) !== undefined;
  // A file that names a secret is written 0600 (the executor fills it in on upload).
  const file = (remotePath: string, content: string): RenderedArtifact => ({ node: node.name, remotePath, mode: content.includes('{{secret:') ? '0600' : '0644', owner: 'Administrators', content });
  const artifacts = [
    file(WIN.containerdConfig, containerdConfig(model, node)),
    ...registryHosts(model, node),
    file(WIN.joinConfig, joinConfiguration(model, node)),
    file(WIN.kubeletPatch, kubeletPatch(model, node)),
    file(WIN.flannelNetConf, netConfJson(model.cluster)),
    ...(hostProcess ? [] : [file(`${WIN.flanneldDir}\\flanneld-service.xml`, flanneldServiceXml(node)), file(WIN.flanneldKubeconfig, flanneldKubeconfig(model))]),
    file(WIN.cniConf, cniConfig(model, node)),
    file(WIN.kubeProxyConfigTemplate, kubeProxyConfigTemplate(model, node)),
    file(WIN.kubeProxyKubeconfig, kubeProxyKubeconfig(model)),
    file(WIN.bootScript, bootScript(model, node, hostProcess)),
    file(WIN.resetScript, resetScript(model)),
    // VMs kubemix creates install from ISO with these (the libvirt driver's install media).
    ...(model.cluster.driver === 'libvirt'
      ? [file(UNATTEND_MEDIA.answerFile, renderUnattend(model, node)), file(UNATTEND_MEDIA.setupScript, setupScript(model, node)), file(UNATTEND_MEDIA.setupComplete, setupCompleteCmd())]
      : []),
  ];
  const overlay = model.cluster.cni.backend === 'vxlan';
  const steps = [
    preflight(model, node),
    containersFeature(),
    rebootAfterFeature(),
    externalNetwork(model, node),
    containerd(model, node),
    binaries(model, hostProcess),
    kubeletService(node),
    join(node),
    ...(hostProcess ? [cniConfigStep(model, node), flannelPod(model)] : [flanneld(model, node), cniConfigStep(model, node)]),
    ...(overlay ? [sourceVip(model)] : []),
    hostProcess ? kubeProxyConfig(model) : kubeProxy(model),
    firewall(model),
    ...(options.defenderExclusions ? [defenderExclusions()] : []),
    bootOrder(hostProcess),
  ];
  // The containerd step uploads the registry hosts too, and the cluster CA the services registry's needs.
  const hosts = artifacts.filter((a) => a.remotePath.startsWith(`${WIN.containerdCerts}\\`));
  const caSecrets = hosts.some((a) => a.content.includes(`{{secret:${SECRET_NAMES.clusterCaCert}}}`)) ? [SECRET_NAMES.clusterCaCert] : [];
  const withHosts = steps.map((s) => {
    if (s.name === 'win-containerd') return { ...s, uploads: [...s.uploads, ...hosts.map((a) => a.remotePath)], secrets: [...new Set([...s.secrets, ...caSecrets])].sort() };
    // The flannel pod starts as soon as the node joins: its net-conf.json must already be there.
    if (hostProcess && s.name === 'win-kubelet-service') return { ...s, uploads: [...s.uploads, WIN.flannelNetConf] };
    return s;
  });
  assertNoForbidden(model, artifacts, withHosts);
  return { artifacts, steps: withHosts };
}

/** A locked gate or removed flag in any output is a kubemix bug: refuse to render it. */
function assertNoForbidden(model: ClusterModel, artifacts: readonly RenderedArtifact[], steps: readonly WindowsStep[]): void {
  const texts = [...artifacts.map((a) => a.content), ...steps.flatMap((s) => [s.apply, s.check ?? ''])];
  for (const bad of forbiddenFor(model.versions.kubernetes)) {
    if (texts.some((t) => t.includes(bad))) throw new Error(`Windows render for Kubernetes ${model.versions.kubernetes} contains ${bad}, which it rejects`);
  }
}
