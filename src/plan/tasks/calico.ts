// Calico's operator on the first controller, before the cluster manifests
// (which hold our Installation and the Felix/IPAM settings its CRDs define):
// each upstream manifest downloaded through the spec's proxy and artifact
// mirror, refused unless its sha256 matches, applied server-side. With
// Windows workers, two waits order the cluster: Linux Calico Ready before any
// Windows join, calico-node-windows Ready before post-deployment.
import { CALICO, CHECKSUM_URLS, URLS } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { CALICO_NAMESPACE, CALICO_WINDOWS_DAEMONSET, TIGERA_NAMESPACE } from '../../render/manifests/calico.js';
import { registeredName } from '../../render/windows/kubeadm.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { sh, task } from '../task.js';
import { shell, shellLines, type ShellText } from '../../util/escape/index.js';
import type { Task } from '../types.js';
import { downloadScript } from './download.js';

const ADMIN = '--kubeconfig=/etc/kubernetes/admin.conf';
const VERSION_ANNOTATION = 'kubemix.dev/calico-version';

export function calicoOperatorTask(model: ClusterModel, host: string, after: readonly string[]): Task {
  const mirror = model.mirrors.artifacts;
  const steps = CALICO.manifests.map(
    (name) => shell`(
${downloadScript(
  {
    url: URLS.calicoManifest(CALICO.version, name),
    checksumUrl: CHECKSUM_URLS.calico(CALICO.version),
    // The CRDs exceed the client-side apply annotation limit: server-side only.
    install: shell`kubectl ${ADMIN} apply --server-side --force-conflicts -f "$file"`,
  },
  mirror,
)})`,
  );
  return task({
    stage: 'task-deploy-cluster',
    host,
    name: 'calico-operator',
    description: `apply the Tigera operator for Calico ${CALICO.version} (${CALICO.manifests.join(', ')}, sha256-verified)`,
    after,
    // Both: the version kubemix applied, and the operator rolled out (a check decides on its exit status alone).
    check:
      sh(shell`[ "$(kubectl ${ADMIN} get namespace ${TIGERA_NAMESPACE} -o jsonpath='{.metadata.annotations.kubemix\\.dev/calico-version}' 2>/dev/null)" = ${CALICO.version} ] &&
  kubectl ${ADMIN} -n ${TIGERA_NAMESPACE} rollout status deployment/tigera-operator --timeout=10s >/dev/null`),
    apply: sh(shell`set -eu
${proxyExports(model)}${shellLines(steps)}
# Our custom resources need the CRDs served, the ConfigMap needs the namespace.
kubectl ${ADMIN} wait --for=condition=Established --timeout=120s crd/installations.operator.tigera.io crd/felixconfigurations.crd.projectcalico.org crd/ipamconfigs.crd.projectcalico.org
kubectl ${ADMIN} -n ${TIGERA_NAMESPACE} rollout status deployment/tigera-operator --timeout=300s
kubectl ${ADMIN} annotate --overwrite namespace ${TIGERA_NAMESPACE} ${VERSION_ANNOTATION}=${CALICO.version}`),
    timeoutSeconds: 600,
  });
}

/**
 * Calico for Windows needs a working Linux Calico first (its docs: "setup a
 * Calico cluster on Linux nodes", strict affinity, then Windows nodes): every
 * Windows join waits until the operator reports Calico Available and
 * calico-node runs on every Linux node.
 */
export function calicoLinuxReadyTask(host: string, after: readonly string[]): Task {
  // The operator creates both after it reads the Installation: wait for them to exist first.
  const wait = (t: number): ShellText =>
    shellLines([
      shell`kubectl ${ADMIN} wait --for=create --timeout=${t}s tigerastatus/calico`,
      shell`kubectl ${ADMIN} wait --for=condition=Available --timeout=${t}s tigerastatus/calico`,
      shell`kubectl ${ADMIN} -n ${CALICO_NAMESPACE} wait --for=create --timeout=${t}s daemonset/calico-node`,
      shell`kubectl ${ADMIN} -n ${CALICO_NAMESPACE} rollout status daemonset/calico-node --timeout=${t}s`,
    ]);
  return task({
    stage: 'task-deploy-cluster',
    host,
    name: 'calico-linux-ready',
    description:
      'wait for Calico Available (tigerastatus) and calico-node Ready on every Linux node, before any Windows join',
    after,
    check: sh(shell`set -eu\n${wait(10)} >/dev/null`),
    apply: sh(shell`set -eu\n${wait(300)}`),
    timeoutSeconds: 1260,
  });
}

/**
 * Before post-deployment: calico-node-windows rolled out on every Windows node
 * and each Windows Node Ready (its kube-proxy pod was checked running and
 * synced on the node by win-kube-proxy-pod, which this waits for).
 */
export function calicoWindowsReadyTask(model: ClusterModel, host: string, after: readonly string[]): Task {
  const nodes = model.nodes.filter((n) => n.osFamily === 'windows').map((n) => `node/${registeredName(n)}`);
  const ds = `daemonset/${CALICO_WINDOWS_DAEMONSET}`;
  const wait = (t: number): ShellText =>
    shellLines([
      shell`kubectl ${ADMIN} -n ${CALICO_NAMESPACE} wait --for=create --timeout=${t}s ${ds}`,
      shell`kubectl ${ADMIN} -n ${CALICO_NAMESPACE} rollout status ${ds} --timeout=${t}s`,
      shell`kubectl ${ADMIN} wait --for=condition=Ready --timeout=${t}s ${nodes}`,
    ]);
  return task({
    stage: 'task-deploy-cluster',
    host,
    name: 'calico-windows-ready',
    description: `expect ${CALICO_WINDOWS_DAEMONSET} Ready on every Windows node and the nodes Ready (kube-proxy runs there as a HostProcess pod)`,
    after,
    check: sh(shell`set -eu\n${wait(10)} >/dev/null`),
    apply: sh(shell`set -eu\n${wait(300)}`),
    timeoutSeconds: 1260,
  });
}
