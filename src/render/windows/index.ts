// renderWindowsNode: model + Windows node → the files it needs. The scripts
// of its steps are rendered by the modules beside this one; plan/tasks/
// windows-recipe.ts puts them in order. Pure.
import { driverFor } from '../../drivers/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { containerdConfig, registryHosts } from './containerd.js';
import { bootScript } from './boot.js';
import { joinConfiguration, kubeletPatch } from './kubeadm.js';
import { cniConfig, netConfJson } from './network.js';
import { WIN } from './paths.js';
import { resetScript } from './reset.js';
import { kubeProxyConfigTemplate } from './services.js';
import { flanneldLauncher, kubeProxyLauncher } from './launchers.js';
import { renderUnattend, UNATTEND_MEDIA } from './unattend.js';
import { setupCompleteCmd, setupScript } from './unattend-setup.js';
import { oncePer } from '../../util/memo.js';

/** Files that do not name the node: rendered once per model, one string for every node's copy. */
const perModel = (model: ClusterModel, name: string, render: () => string): string =>
  oncePer(model, `windows-files:${name}`, render);

/**
 * VMs kubemix creates install from ISO with these files, placed where the
 * driver builds the node's install media (on its hypervisor); they hold
 * secret references, so 0600, root-only.
 */
function installMedia(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  const place = driverFor(model.cluster.driver).installMedia(node, model);
  if (place === undefined) return [];
  const file = (path: string, content: string): RenderedArtifact => ({
    node: place.host,
    remotePath: `${place.dir}/${path}`,
    mode: '0600',
    owner: 'root',
    content,
  });
  return [
    file(UNATTEND_MEDIA.answerFile, renderUnattend(model, node)),
    file(UNATTEND_MEDIA.setupScript, setupScript(model, node)),
    file(UNATTEND_MEDIA.setupComplete, perModel(model, 'setup-complete', setupCompleteCmd)),
  ];
}

export function renderWindowsNode(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  // Calico: calico-node-windows writes the CNI config; no flannel files at all.
  const flannel = model.overlay.plugin === 'flannel';
  // A file that names a secret is written 0600 (the executor fills it in on upload).
  const file = (remotePath: string, content: string): RenderedArtifact => ({
    node: node.name,
    remotePath,
    mode: content.includes('{{secret:') ? '0600' : '0644',
    owner: 'Administrators',
    content,
  });
  const artifacts = [
    file(WIN.containerdConfig, containerdConfig(model, node)),
    ...registryHosts(model, node),
    file(WIN.joinConfig, joinConfiguration(model, node)),
    file(WIN.kubeletPatch, kubeletPatch(model, node)),
    // What the flanneld and kube-proxy HostProcess pods read from the host.
    ...hostProcessFiles(model, node).map((f) => file(f.remotePath, f.content)),
    ...(flannel ? [file(WIN.cniConf, cniConfig(model, node))] : []),
    file(WIN.bootScript, bootScript(model, node)),
    file(
      WIN.resetScript,
      perModel(model, 'reset', () => resetScript(model)),
    ),
    ...installMedia(model, node),
  ];
  return artifacts;
}

/** The files the flanneld and kube-proxy pods read from the host: their launchers, net-conf.json, kube-proxy's config template. */
export function hostProcessFiles(model: ClusterModel, node: PlanNode): { remotePath: string; content: string }[] {
  const flannel = model.overlay.plugin === 'flannel';
  return [
    ...(flannel
      ? [
          { remotePath: WIN.flannelNetConf, content: perModel(model, 'net-conf', () => netConfJson(model)) },
          {
            remotePath: WIN.flanneldLauncher,
            content: perModel(model, 'flanneld-launcher', () => flanneldLauncher(model)),
          },
        ]
      : []),
    { remotePath: WIN.kubeProxyConfigTemplate, content: kubeProxyConfigTemplate(model, node) },
    {
      remotePath: WIN.kubeProxyLauncher,
      content: perModel(model, 'kube-proxy-launcher', () => kubeProxyLauncher(model)),
    },
  ];
}
