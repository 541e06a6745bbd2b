// kubelet, kubeadm and kubectl from pkgs.k8s.io at the planned version, held
// there (apt-mark hold; dnf's repo exclude) so upgrades are deliberate.
import { URLS, linuxDistro } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { APT_KEYRING, KUBERNETES_PACKAGES, renderKubernetesRepo } from '../../render/linux/kubernetes-repo.js';
import { artifactId } from '../artifact-path.js';
import { sh, task, taskId } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import type { Task } from '../types.js';
import { shell } from '../../util/escape/index.js';
import type { RenderedArtifact } from '../../render/types.js';
import { PREP_STAGE, linuxNodes } from './linux-prep.js';

export function kubernetesPackagesContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const tasks: Task[] = [];
  const artifacts: RenderedArtifact[] = [];
  for (const node of linuxNodes(model)) {
    const family = linuxDistro(node.os)?.family ?? 'apt';
    const repo = renderKubernetesRepo(node, family, model.versions.kubernetesMinor);
    artifacts.push(repo);
    tasks.push(packagesTask(model, node, family, repo));
  }
  return { tasks, artifacts };
}

function packagesTask(model: ClusterModel, node: PlanNode, family: 'apt' | 'dnf', repo: RenderedArtifact): Task {
  const v = model.versions.kubernetes;
  const list = KUBERNETES_PACKAGES.join(' ');
  const installed = shell`kubeadm version -o short 2>/dev/null | grep -qx 'v${v}'
kubelet --version 2>/dev/null | grep -qx 'Kubernetes v${v}'
kubectl version --client 2>/dev/null | grep -q 'Client Version: v${v}$'`;
  const check =
    family === 'apt'
      ? shell`${installed}\n[ "$(apt-mark showhold ${KUBERNETES_PACKAGES} | sort | tr '\\n' ' ')" = ${`${list} `} ]`
      : installed;
  // The key lands in a file first: sh has no pipefail, so `curl | gpg` would
  // hide an unreachable pkgs.k8s.io behind a later, vaguer apt-get error.
  const apply =
    family === 'apt'
      ? shell`set -eu
export DEBIAN_FRONTEND=noninteractive
install -d -m 0755 /etc/apt/keyrings
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
curl -fsSL -o "$work/Release.key" ${`${URLS.kubernetesDeb(model.versions.kubernetesMinor)}Release.key`}
gpg --dearmor --yes -o ${APT_KEYRING} "$work/Release.key"
apt-get update -q
apt-mark unhold ${KUBERNETES_PACKAGES} >/dev/null
apt-get install -y -q --allow-downgrades ${KUBERNETES_PACKAGES.map((p) => `${p}=${v}-*`)}
apt-mark hold ${KUBERNETES_PACKAGES} >/dev/null`
      : shell`set -eu
dnf install -y -q --disableexcludes=kubernetes ${KUBERNETES_PACKAGES.map((p) => `${p}-${v}`)}`;
  return task({
    stage: PREP_STAGE,
    host: node.name,
    name: 'kubernetes-packages',
    description: `${list} ${v} from pkgs.k8s.io, held`,
    after: [taskId(PREP_STAGE, node.name, 'download-tools')],
    check: sh(check),
    apply: sh(shell`${proxyExports(model)}${apply}\nsystemctl enable --quiet kubelet`),
    uploads: [artifactId(repo.node, repo.remotePath)],
    timeoutSeconds: 900,
  });
}
