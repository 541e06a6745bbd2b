// The per-minor pkgs.k8s.io package repository (Kubernetes docs, "Installing
// kubeadm": one repository per minor version, signed by its Release.key), for apt
// and dnf. dnf's `exclude` keeps a routine `dnf upgrade` from moving the
// cluster's version: kubemix installs with --disableexcludes instead.
import { URLS } from '../../matrix/index.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';

export const APT_KEYRING = '/etc/apt/keyrings/kubernetes-apt-keyring.gpg';
export const APT_LIST = '/etc/apt/sources.list.d/kubernetes.list';
export const DNF_REPO = '/etc/yum.repos.d/kubernetes.repo';
export const KUBERNETES_PACKAGES = ['kubeadm', 'kubectl', 'kubelet'] as const;

export function renderKubernetesRepo(node: PlanNode, family: 'apt' | 'dnf', minor: string): RenderedArtifact {
  const file = (remotePath: string, content: string): RenderedArtifact => ({
    node: node.name,
    remotePath,
    mode: '0644',
    owner: 'root:root',
    content,
  });
  if (family === 'apt') return file(APT_LIST, `deb [signed-by=${APT_KEYRING}] ${URLS.kubernetesDeb(minor)} /\n`);
  const base = URLS.kubernetesRpm(minor);
  return file(
    DNF_REPO,
    `[kubernetes]
name=Kubernetes v${minor}
baseurl=${base}
enabled=1
gpgcheck=1
gpgkey=${base}repodata/repomd.xml.key
exclude=${[...KUBERNETES_PACKAGES, 'cri-tools', 'kubernetes-cni'].join(' ')}
`,
  );
}
