// kubeadm, kubelet, kubectl and crictl on a Linux node: from upstream's
// release files (`spec.kubernetes.install: binaries`, the default), each a
// node download checked against the SHA256 the deployer verified and fetched
// from the services node's cache (so an air-gapped node needs nothing from
// the internet), then kubelet's unit and kubeadm's drop-in as upstream's
// packages lay them out; or from pkgs.k8s.io (`packages`,
// kubernetes-packages.ts). Which tasks kubeadm waits for is asked here.
import { linuxDistro } from '../../matrix/index.js';
import { downloadCache } from '../../model/downloads.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { KUBE_BIN_DIR, renderKubeletUnits } from '../../render/linux/kubelet.js';
import type { RenderedArtifact } from '../../render/types.js';
import { shell, shellCode, type ShellText } from '../../util/escape/index.js';
import { sh, task, taskId } from '../task.js';
import type { Stage, Task } from '../types.js';
import { configTask } from './config-files.js';
import { nodeDownloadScript } from './download.js';
import { kubernetesPackagesContribution } from './kubernetes-packages.js';
import { PREP_STAGE, linuxNodes } from './linux-prep.js';
import { SECRET } from './registry-scripts.js';

/** One binary of the release: its download id, the installed path and the check that it is the planned one. */
export interface KubeBinary {
  readonly name: 'kubeadm' | 'kubelet' | 'kubectl' | 'crictl';
  readonly id: string;
  readonly check: ShellText;
  readonly install: ShellText;
}

export function kubeBinaries(model: ClusterModel): KubeBinary[] {
  const v = model.versions.kubernetes;
  const at = (name: string): string => `${KUBE_BIN_DIR}/${name}`;
  const bin = (name: 'kubeadm' | 'kubelet' | 'kubectl', check: ShellText): KubeBinary => ({
    name,
    id: `linux/${name}`,
    check,
    install: shell`install -m 0755 "$file" ${at(name)}`,
  });
  return [
    bin('kubeadm', shell`${at('kubeadm')} version -o short 2>/dev/null | grep -qx 'v${v}'`),
    bin('kubelet', shell`${at('kubelet')} --version 2>/dev/null | grep -qx 'Kubernetes v${v}'`),
    bin('kubectl', shell`${at('kubectl')} version --client 2>/dev/null | grep -q '^Client Version: v${v}$'`),
    {
      name: 'crictl',
      id: 'linux/crictl.tar.gz',
      check: shell`${at('crictl')} --version 2>/dev/null | grep -qx 'crictl version v${model.versions.crictl}'`,
      // The release archive holds the one file crictl.
      install: shell`tar -C "$work" -xzf "$file" crictl\ninstall -m 0755 "$work/crictl" ${at('crictl')}`,
    },
  ];
}

/** A binary fetched through the node download path: the services node's cache when there is one, else its source. */
export function binaryTask(model: ClusterModel, node: PlanNode, b: KubeBinary, stage: Stage, after: string[]): Task {
  const cached = downloadCache(model) !== undefined;
  return task({
    stage,
    host: node.name,
    name: `${b.name}-binary`,
    description: `${b.name} ${b.name === 'crictl' ? model.versions.crictl : model.versions.kubernetes} from the upstream release${cached ? ', through the download cache' : ''}`,
    after,
    check: sh(b.check),
    // From the services node's cache no proxy applies; from the source the spec's proxy does.
    apply: sh(shell`${cached ? shellCode('') : proxyExports(model)}${nodeDownloadScript(model, b.id, b.install)}`),
    ...(cached ? { secrets: [SECRET.caCert] } : {}),
    timeoutSeconds: 600,
  });
}

/** kubelet's unit and drop-in in place, the unit enabled; a kubelet already running restarts on a change. */
function kubeletServiceTask(model: ClusterModel, node: PlanNode, files: RenderedArtifact[], after: string[]): Task {
  return configTask({
    stage: PREP_STAGE,
    host: node.name,
    name: 'kubelet-service',
    description: "kubelet.service and kubeadm's 10-kubeadm.conf drop-in, enabled",
    files,
    // kubelet restarts in a loop until kubeadm writes its config: enabled is the state to keep, not active.
    validate: shellCode(`systemctl daemon-reload
systemctl enable --quiet kubelet
if systemctl is-active --quiet kubelet; then systemctl restart kubelet; fi`),
    live: shellCode('systemctl is-enabled --quiet kubelet'),
    after,
  });
}

export function kubernetesBinariesContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  if (model.kubernetesInstall === 'packages') return kubernetesPackagesContribution(model);
  const tasks: Task[] = [];
  const artifacts: RenderedArtifact[] = [];
  for (const node of linuxNodes(model)) {
    const tools = [taskId(PREP_STAGE, node.name, 'download-tools')];
    const binaries = kubeBinaries(model).map((b) => binaryTask(model, node, b, PREP_STAGE, tools));
    const units = renderKubeletUnits(node, linuxDistro(node.os)?.family ?? 'apt');
    artifacts.push(...units);
    tasks.push(
      ...binaries,
      kubeletServiceTask(
        model,
        node,
        units,
        binaries.map((t) => t.id),
      ),
    );
  }
  return { tasks, artifacts };
}

/** The tasks after which a Linux node has kubeadm, kubelet (enabled) and kubectl at the planned version. */
export function kubernetesInstalledNames(model: ClusterModel): string[] {
  return model.kubernetesInstall === 'packages'
    ? ['kubernetes-packages']
    : [...kubeBinaries(model).map((b) => `${b.name}-binary`), 'kubelet-service'];
}
