// task-deploy-cluster on Linux: init the first controller (with the cluster
// CA kubemix generated, so the join CA hash is known in advance), apply the
// CNI, join the other controllers and the Linux workers; then, after deploy,
// check that kubeadm kept kube-proxy and CoreDNS on Linux nodes.
import type { ClusterModel } from '../../model/resolve.js';
import { kubeadmConfigPath, renderKubeadm } from '../../render/kubeadm/config.js';
import { renderProbePatches } from '../../render/kubeadm/patches.js';
import { KUBEADM_SECRET } from '../../render/kubeadm/secrets.js';
import { kubeadmTaskSeconds } from '../../render/kubeadm/timeouts.js';
import { renderManifests } from '../../render/manifests/index.js';
import { artifactId, uploadPath } from '../artifact-path.js';
import { calicoLinuxReadyTask, calicoOperatorTask, calicoWindowsReadyTask } from './calico.js';
import { sh, task, taskId } from '../task.js';
import type { PlanNode } from '../../model/types.js';
import type { Task } from '../types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { kubernetesInstalledNames } from './kubernetes-binaries.js';
import { initScripts, joinScripts } from './kubeadm-once.js';
import { registryImagesTask } from './registry-images.js';
import { PREP_STAGE, linuxNodes } from './linux-prep.js';
import { SECRET } from './registry-scripts.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { shell, shellCode, shellLines } from '../../util/escape/index.js';

const DEPLOY = 'task-deploy-cluster';
const ADMIN = '--kubeconfig=/etc/kubernetes/admin.conf';
/** kubeadm's waits during init, one after another (kubelet, control plane, then its API calls). */
const INIT_WAITS = ['kubeletHealthCheck', 'controlPlaneComponentHealthCheck', 'kubernetesAPICall'] as const;
/** A worker's join: discovery, the kubelet's TLS bootstrap, its health. */
const JOIN_WAITS = ['discovery', 'tlsBootstrap', 'kubeletHealthCheck'] as const;
/** A control-plane join adds its etcd member and its components. */
const CONTROL_PLANE_JOIN_WAITS = [...JOIN_WAITS, 'etcdAPICall', 'controlPlaneComponentHealthCheck'] as const;
const PREP_NEEDED = ['cgroup-v2', 'swap-off', 'sysctls', 'etc-hosts', 'containerd'];

export function kubeadmContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const nodes = linuxNodes(model);
  const first = nodes.find((n) => n.role === 'control-plane');
  if (first === undefined) return { tasks: [], artifacts: [] };
  const manifests = renderManifests(model);
  const patches = new Map(nodes.map((n) => [n.name, renderProbePatches(model, n)]));
  const artifacts: RenderedArtifact[] = [
    ...manifests,
    ...nodes.flatMap((n) => [renderKubeadm(model, n, n === first), ...(patches.get(n.name) ?? [])]),
  ];
  const patchIds = (n: PlanNode): string[] => (patches.get(n.name) ?? []).map((p) => artifactId(p.node, p.remotePath));
  const needed = [...PREP_NEEDED, ...kubernetesInstalledNames(model)];
  const prep = (n: PlanNode): string[] => needed.map((name) => taskId(PREP_STAGE, n.name, name));
  const init = initTask(model, first, [...prep(first), ...servicesReady(model)], patchIds(first));
  // Calico's operator brings the CRDs our Installation and Felix/IPAM objects need.
  const operator = model.overlay.plugin === 'calico' ? [calicoOperatorTask(model, first.name, [init.id])] : [];
  const cni = task({
    stage: DEPLOY,
    host: first.name,
    name: 'cluster-manifests',
    description: `apply ${manifests.map((m) => m.remotePath).join(', ')}`,
    after: [init.id, ...operator.map((o) => o.id)],
    check: null,
    // Server-side apply is idempotent: re-running changes nothing that matches.
    apply: sh(
      shellLines([
        shellCode('set -eu'),
        ...manifests.map((m) => shell`kubectl ${ADMIN} apply --server-side --force-conflicts -f ${uploadPath(m)}`),
      ]),
    ),
    uploads: manifests.map((m) => artifactId(m.node, m.remotePath)),
  });
  const joins = nodes
    .filter((n) => n !== first)
    .map((n) => joinTask(model, n, [...prep(n), n.role === 'control-plane' ? init.id : cni.id], patchIds(n)));
  const calicoWaits = calicoWindowsWaits(model, first.name, [cni.id, ...joins.map((j) => j.id)]);
  // Post-deployment starts once Calico's Windows side is Ready.
  const windowsReady = calicoWaits.slice(1).map((t) => t.id);
  const post = task({
    stage: 'task-post-deployment',
    host: first.name,
    name: 'linux-only-addons',
    description: 'check kube-proxy and CoreDNS are pinned to kubernetes.io/os: linux',
    after: [cni.id, ...joins.map((j) => j.id), ...windowsReady],
    check: null,
    apply: sh(shell`set -eu
[ "$(kubectl ${ADMIN} -n kube-system get daemonset kube-proxy -o jsonpath='{.spec.template.spec.nodeSelector.kubernetes\\.io/os}')" = linux ]
[ "$(kubectl ${ADMIN} -n kube-system get deployment coredns -o jsonpath='{.spec.template.spec.nodeSelector.kubernetes\\.io/os}')" = linux ]`),
    timeoutSeconds: 60,
  });
  return {
    tasks: [init, ...operator, cni, ...joins, ...calicoWaits, post, ...labelTasks(nodes, first, joins, windowsReady)],
    artifacts,
  };
}

/**
 * Calico with Windows workers: [Linux side Ready (Windows joins wait for it),
 * Windows side Ready (post-deployment waits for it)]; empty otherwise.
 */
function calicoWindowsWaits(model: ClusterModel, host: string, linuxDone: readonly string[]): Task[] {
  const windows = model.nodes.filter((n) => n.osFamily === 'windows');
  if (model.overlay.plugin !== 'calico' || windows.length === 0) return [];
  const kubeProxy = windows.map((n) => taskId(DEPLOY, n.name, 'win-kube-proxy-pod'));
  return [calicoLinuxReadyTask(host, linuxDone), calicoWindowsReadyTask(model, host, kubeProxy)];
}

/**
 * What any later node join waits for: the first controller initialised and the
 * cluster manifests (CNI, RuntimeClasses, RBAC) applied. Empty without a Linux
 * control plane.
 */
export function clusterReadyTaskIds(model: ClusterModel): string[] {
  const first = linuxNodes(model).find((n) => n.role === 'control-plane');
  if (first === undefined) return [];
  const calico = model.overlay.plugin === 'calico' && model.nodes.some((n) => n.osFamily === 'windows');
  return [
    taskId(DEPLOY, first.name, 'kubeadm-init'),
    taskId(DEPLOY, first.name, 'cluster-manifests'),
    // Calico for Windows: the Linux side Ready first (calico-linux-ready).
    ...(calico ? [taskId(DEPLOY, first.name, 'calico-linux-ready')] : []),
  ];
}

/** Kubeinit's computes show a worker role in `kubectl get nodes`; kubeadm only labels control planes. */
function labelTasks(nodes: readonly PlanNode[], first: PlanNode, joins: readonly Task[], also: string[] = []): Task[] {
  const workers = nodes.filter((n) => n.role === 'worker');
  if (workers.length === 0) return [];
  const label = 'node-role.kubernetes.io/worker';
  return [
    task({
      stage: 'task-post-deployment',
      host: first.name,
      name: 'label-workers',
      description: `label ${workers.map((w) => w.name).join(', ')} as workers`,
      after: [...joins.map((j) => j.id), ...also],
      check: sh(
        shell`[ "$(kubectl ${ADMIN} get nodes -l ${label} -o name | grep -cxE ${`node/(${workers.map((w) => w.name).join('|')})`})" = ${workers.length} ]`,
      ),
      apply: sh(shell`kubectl ${ADMIN} label --overwrite node ${workers.map((w) => w.name)} ${`${label}=`}`),
      timeoutSeconds: 60,
    }),
  ];
}

/** The API endpoint resolves and balances only once the services node serves it. */
function servicesReady(model: ClusterModel): string[] {
  const services = model.nodes.find((n) => n.role === 'services');
  const s = model.services;
  if (services === undefined || s === undefined) return [];
  return [
    ...[...(s.loadBalancer ? ['haproxy'] : []), ...(s.dns ? ['bind'] : [])].map((name) =>
      taskId('task-create-services', services.name, name),
    ),
    // Air-gapped: every image kubeadm and the nodes pull is in the services registry first.
    ...registryImagesTask(model).map((t) => t.id),
  ];
}

function initTask(model: ClusterModel, node: PlanNode, after: string[], patches: string[]): Task {
  const pki = '/etc/kubernetes/pki';
  const scripts = initScripts(shell`umask 077
install -d -m 0755 ${pki}
# kubeadm adopts a CA it finds: the join discovery hash is then known before init.
cat > ${`${pki}/ca.crt`} <<'KUBEMIX_EOF'
{{secret:${SECRET.caCert}}}
KUBEMIX_EOF
cat > ${`${pki}/ca.key`} <<'KUBEMIX_EOF'
{{secret:${SECRET_NAMES.clusterCaKey}}}
KUBEMIX_EOF
chmod 0644 ${`${pki}/ca.crt`}
kubeadm init ${`--config=${kubeadmConfigPath('init')}`} --upload-certs`);
  return task({
    stage: DEPLOY,
    host: node.name,
    name: 'kubeadm-init',
    description: `kubeadm init ${node.name} behind ${model.cluster.apiEndpoint.host}:${model.cluster.apiEndpoint.port}`,
    after,
    check: sh(scripts.check),
    apply: sh(scripts.apply),
    uploads: [artifactId(node.name, kubeadmConfigPath('init')), ...patches],
    secrets: [SECRET.caCert, SECRET_NAMES.clusterCaKey, KUBEADM_SECRET.token, KUBEADM_SECRET.certificateKey],
    // `kubemix kubeconfig` hands this to the user.
    captures: [{ name: SECRET_NAMES.adminKubeconfig, remotePath: '/etc/kubernetes/admin.conf' }],
    timeoutSeconds: kubeadmTaskSeconds(model.kubeadm, INIT_WAITS),
  });
}

function joinTask(model: ClusterModel, node: PlanNode, after: string[], patches: string[]): Task {
  const scripts = joinScripts(shell`kubeadm join ${`--config=${kubeadmConfigPath('join')}`}`);
  return task({
    stage: DEPLOY,
    host: node.name,
    name: 'kubeadm-join',
    description: `kubeadm join ${node.name} as ${node.role === 'control-plane' ? 'a control-plane node' : 'a worker'}`,
    after,
    check: sh(scripts.check),
    apply: sh(scripts.apply),
    uploads: [artifactId(node.name, kubeadmConfigPath('join')), ...patches],
    secrets: [
      KUBEADM_SECRET.token,
      KUBEADM_SECRET.caCertHash,
      ...(node.role === 'control-plane' ? [KUBEADM_SECRET.certificateKey] : []),
    ],
    timeoutSeconds: kubeadmTaskSeconds(
      model.kubeadm,
      node.role === 'control-plane' ? CONTROL_PLANE_JOIN_WAITS : JOIN_WAITS,
    ),
  });
}
