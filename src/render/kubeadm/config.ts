// kubeadm configuration (kubeadm API v1beta4, the only one 1.36 accepts): InitConfiguration +
// ClusterConfiguration + KubeletConfiguration for the first controller,
// JoinConfiguration for the other controllers and for Linux workers. v1beta4:
// extraArgs are lists of {name, value}. Secrets are `{{secret:…}}` references
// filled by the executor, so these files are uploaded with mode 0600.
import { stringify } from 'yaml';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { CONTAINERD_PATHS } from '../containerd/paths.js';
import { KUBEADM_PATCHES_DIR, hasProbePatches } from './patches.js';
import { KUBEADM_SECRET as S, ref } from './secrets.js';
import { goDuration, timeoutsBlock } from './timeouts.js';

export const KUBEADM_DIR = '/etc/kubemix/kubeadm';
export const KUBEADM_API = 'kubeadm.k8s.io/v1beta4';
export const CLUSTER_DNS_DOMAIN = 'cluster.local';

export function kubeadmConfigPath(kind: 'init' | 'join' | 'upgrade'): string {
  return `${KUBEADM_DIR}/${kind}.yaml`;
}

type Doc = Record<string, unknown>;

function nodeRegistration(model: ClusterModel, node: PlanNode): Doc {
  return {
    name: node.name,
    criSocket: `unix://${CONTAINERD_PATHS.socket}`,
    // Taints as planned: an empty list keeps kubeadm from adding its own default.
    taints: node.taints.map(parseTaint),
    kubeletExtraArgs: [{ name: 'node-ip', value: node.ip }],
    ...ignoredPreflight(model),
  };
}

/** spec.kubernetes.ignorePreflightErrors, as every kubeadm document that runs preflight takes it. */
function ignoredPreflight(model: ClusterModel): { ignorePreflightErrors?: string[] } {
  const names = model.kubeadm.ignorePreflightErrors;
  return names === undefined ? {} : { ignorePreflightErrors: [...names] };
}

function parseTaint(taint: string): Doc {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(taint);
  if (m === null) throw new Error(`cannot parse taint ${taint}`);
  return { key: m[1], ...(m[2] === undefined ? {} : { value: m[2] }), effect: m[3] };
}

/** `timeouts` and, on a control plane with probe slack, `patches`: what a slow machine needs in each document. */
function slowMachineFields(
  model: ClusterModel,
  controlPlane: boolean,
  base: Parameters<typeof timeoutsBlock>[1] = {},
): Doc {
  const timeouts = timeoutsBlock(model.kubeadm, base);
  return {
    ...(controlPlane && hasProbePatches(model) ? { patches: { directory: KUBEADM_PATCHES_DIR } } : {}),
    ...(timeouts === undefined ? {} : { timeouts }),
  };
}

function endpoint(model: ClusterModel): string {
  return `${model.cluster.apiEndpoint.host}:${model.cluster.apiEndpoint.port}`;
}

export function initDocuments(model: ClusterModel, node: PlanNode): Doc[] {
  const c = model.cluster;
  const init: Doc = {
    apiVersion: KUBEADM_API,
    kind: 'InitConfiguration',
    bootstrapTokens: [
      {
        token: ref(S.token),
        ttl: '24h0m0s',
        usages: ['signing', 'authentication'],
        groups: ['system:bootstrappers:kubeadm:default-node-token'],
      },
    ],
    certificateKey: ref(S.certificateKey),
    localAPIEndpoint: { advertiseAddress: node.ip, bindPort: c.apiEndpoint.port },
    nodeRegistration: nodeRegistration(model, node),
    ...slowMachineFields(model, true),
  };
  const cluster: Doc = {
    apiVersion: KUBEADM_API,
    kind: 'ClusterConfiguration',
    clusterName: c.name,
    kubernetesVersion: `v${model.versions.kubernetes}`,
    controlPlaneEndpoint: endpoint(model),
    networking: { dnsDomain: CLUSTER_DNS_DOMAIN, podSubnet: c.network.podCidr, serviceSubnet: c.network.serviceCidr },
    apiServer: {
      certSANs: [c.apiEndpoint.host, `api-int.${c.name}.${c.domain}`, c.apiEndpoint.address].filter(
        (v, i, a) => a.indexOf(v) === i,
      ),
      ...etcdCheckArgs(model),
    },
    ...leaderElectionArgs(model),
    ...etcdTimingArgs(model),
  };
  const kubelet: Doc = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // containerd's runc runs with SystemdCgroup = true: the kubelet must match.
    cgroupDriver: 'systemd',
    failSwapOn: true,
    ...kubeletTimeouts(model),
  };
  return [init, cluster, kubelet];
}

/**
 * kube-apiserver's /livez and /readyz each ask etcd, and give up after 2 s
 * (`--etcd-healthcheck-timeout`, `--etcd-readycheck-timeout`): a probe given
 * a minute on a slow machine still failed whenever etcd took over 2 s, and
 * /readyz answered 500 (the real-cluster tier's run 13, etcd under software
 * emulation). With spec.kubernetes.controlPlaneProbes.timeoutSeconds the
 * inner checks get half the probe's time, so the answer still beats the probe.
 */
function etcdCheckArgs(model: ClusterModel): { extraArgs?: { name: string; value: string }[] } {
  const t = model.kubeadm.controlPlaneProbes?.timeoutSeconds;
  if (t === undefined) return {};
  const value = `${Math.max(2, Math.floor(t / 2))}s`;
  return {
    extraArgs: [
      { name: 'etcd-healthcheck-timeout', value },
      { name: 'etcd-readycheck-timeout', value },
    ],
  };
}

/** spec.kubernetes.leaderElection → both elected components' `--leader-elect-*` flags, as Go durations. */
function leaderElectionArgs(model: ClusterModel): Record<string, { extraArgs: { name: string; value: string }[] }> {
  const e = model.kubeadm.leaderElection;
  if (e === undefined) return {};
  const flags = { leaseDuration: 'lease-duration', renewDeadline: 'renew-deadline', retryPeriod: 'retry-period' };
  const extraArgs = (Object.keys(flags) as (keyof typeof flags)[]).flatMap((k) => {
    const seconds = e[k];
    return seconds === undefined ? [] : [{ name: `leader-elect-${flags[k]}`, value: goDuration(seconds) }];
  });
  return { controllerManager: { extraArgs }, scheduler: { extraArgs } };
}

/**
 * spec.kubernetes.kubelet → the KubeletConfiguration kubeadm uploads as the
 * kubelet-config ConfigMap: every node's kubelet (Linux and Windows joins,
 * `kubeadm upgrade node`) reads it from there.
 */
function kubeletTimeouts(model: ClusterModel): { runtimeRequestTimeout?: string } {
  const t = model.kubeadm.kubelet?.runtimeRequestTimeout;
  return t === undefined ? {} : { runtimeRequestTimeout: goDuration(t) };
}

/**
 * spec.kubernetes.etcd → the local etcd's `--heartbeat-interval` and
 * `--election-timeout`, integers of milliseconds (etcd's flag type). In the
 * ClusterConfiguration, so every member and every upgrade's manifest carry them.
 */
function etcdTimingArgs(model: ClusterModel): { etcd?: { local: { extraArgs: { name: string; value: string }[] } } } {
  const e = model.kubeadm.etcd;
  if (e === undefined) return {};
  const flags = { heartbeatInterval: 'heartbeat-interval', electionTimeout: 'election-timeout' } as const;
  const extraArgs = (Object.keys(flags) as (keyof typeof flags)[]).flatMap((k) => {
    const ms = e[k];
    return ms === undefined ? [] : [{ name: flags[k], value: String(ms) }];
  });
  return { etcd: { local: { extraArgs } } };
}

export function joinDocument(model: ClusterModel, node: PlanNode): Doc {
  return {
    apiVersion: KUBEADM_API,
    kind: 'JoinConfiguration',
    discovery: {
      bootstrapToken: { apiServerEndpoint: endpoint(model), token: ref(S.token), caCertHashes: [ref(S.caCertHash)] },
    },
    ...(node.role === 'control-plane'
      ? {
          controlPlane: {
            localAPIEndpoint: { advertiseAddress: node.ip, bindPort: model.cluster.apiEndpoint.port },
            certificateKey: ref(S.certificateKey),
          },
        }
      : {}),
    nodeRegistration: nodeRegistration(model, node),
    ...slowMachineFields(model, node.role === 'control-plane', { discovery: 300 }),
  };
}

/**
 * UpgradeConfiguration for `kubeadm upgrade apply|node --config`, only when the
 * spec sets timeouts, probe slack or preflight checks to ignore (otherwise
 * kubeadm's defaults serve): the static pods kubeadm rewrites keep the probe
 * patches, its waits the spec's timeouts, its preflight the spec's list.
 * Undefined without any.
 */
export function upgradeDocument(model: ClusterModel, node: PlanNode): Doc | undefined {
  const { patches, timeouts } = slowMachineFields(model, node.role === 'control-plane');
  const phase = { ...(patches === undefined ? {} : { patches: { ...patches } }), ...ignoredPreflight(model) };
  if (timeouts === undefined && Object.keys(phase).length === 0) return undefined;
  return {
    apiVersion: KUBEADM_API,
    kind: 'UpgradeConfiguration',
    ...(Object.keys(phase).length === 0 ? {} : { apply: { ...phase }, node: { ...phase } }),
    ...(timeouts === undefined ? {} : { timeouts }),
  };
}

/** The upgrade configuration file of a Linux node, when the spec needs one. */
export function renderUpgradeKubeadm(model: ClusterModel, node: PlanNode): RenderedArtifact | undefined {
  const doc = upgradeDocument(model, node);
  if (doc === undefined) return undefined;
  return {
    node: node.name,
    remotePath: kubeadmConfigPath('upgrade'),
    mode: '0600',
    owner: 'root:root',
    content: `# Rendered by kubemix; re-plan instead of editing.\n${stringify(doc, { lineWidth: 0 })}`,
  };
}

export function renderKubeadm(model: ClusterModel, node: PlanNode, first: boolean): RenderedArtifact {
  const docs = first ? initDocuments(model, node) : [joinDocument(model, node)];
  const content = `# Rendered by kubemix; re-plan instead of editing.\n${docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n')}`;
  return {
    node: node.name,
    remotePath: kubeadmConfigPath(first ? 'init' : 'join'),
    mode: '0600',
    owner: 'root:root',
    content,
  };
}
