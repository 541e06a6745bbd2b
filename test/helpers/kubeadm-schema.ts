// A schema of the kubeadm v1beta4 types kubemix writes, transcribed from
// k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go (the
// fields we use, strict: an unknown or misspelt field fails, as kubeadm's
// strict decoding does). v1beta4 extraArgs are lists of {name, value}.
import { z } from 'zod';

const arg = z.strictObject({ name: z.string().min(1), value: z.string() });
const duration = z.string().regex(/^(\d+h)?(\d+m)?(\d+s)?$/);
const taint = z.strictObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
});
const nodeRegistration = z.strictObject({
  name: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/),
  criSocket: z.string().startsWith('unix:///'),
  taints: z.array(taint),
  kubeletExtraArgs: z.array(arg).optional(),
  ignorePreflightErrors: z.array(z.string()).optional(),
  imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
});
const apiEndpoint = z.strictObject({ advertiseAddress: z.ipv4(), bindPort: z.number().int().min(1).max(65535) });
const secretRef = z.string().regex(/^\{\{secret:[a-z0-9-]+\}\}$/);
const api = z.literal('kubeadm.k8s.io/v1beta4');
/** v1beta4 Timeouts (types.go `Timeouts`). */
const timeouts = z.strictObject({
  controlPlaneComponentHealthCheck: duration.optional(),
  kubeletHealthCheck: duration.optional(),
  kubernetesAPICall: duration.optional(),
  etcdAPICall: duration.optional(),
  tlsBootstrap: duration.optional(),
  discovery: duration.optional(),
  upgradeManifests: duration.optional(),
});
/** v1beta4 Patches: `directory` holds `<target>[suffix][+patchtype].<yaml|json>` files. */
const patches = z.strictObject({ directory: z.string().startsWith('/') });

export const initConfiguration = z.strictObject({
  apiVersion: api,
  kind: z.literal('InitConfiguration'),
  bootstrapTokens: z.array(
    z.strictObject({
      token: secretRef,
      ttl: duration,
      usages: z.array(z.enum(['signing', 'authentication'])),
      groups: z.array(z.string()),
    }),
  ),
  certificateKey: secretRef,
  localAPIEndpoint: apiEndpoint,
  nodeRegistration,
  patches: patches.optional(),
  timeouts: timeouts.optional(),
});

export const clusterConfiguration = z.strictObject({
  apiVersion: api,
  kind: z.literal('ClusterConfiguration'),
  clusterName: z.string(),
  kubernetesVersion: z.string().regex(/^v\d+\.\d+\.\d+$/),
  controlPlaneEndpoint: z.string().regex(/^[a-z0-9.-]+:\d+$/),
  networking: z.strictObject({ dnsDomain: z.string(), podSubnet: z.string(), serviceSubnet: z.string() }),
  apiServer: z.strictObject({ certSANs: z.array(z.string()), extraArgs: z.array(arg).optional() }),
});

export const joinConfiguration = z.strictObject({
  apiVersion: api,
  kind: z.literal('JoinConfiguration'),
  discovery: z.strictObject({
    bootstrapToken: z.strictObject({
      apiServerEndpoint: z.string(),
      token: secretRef,
      caCertHashes: z.array(secretRef),
    }),
  }),
  controlPlane: z.strictObject({ localAPIEndpoint: apiEndpoint, certificateKey: secretRef }).optional(),
  nodeRegistration,
  patches: patches.optional(),
  timeouts,
});

/** UpgradeConfiguration, as kubemix writes it for `kubeadm upgrade apply|node --config`. */
export const upgradeConfiguration = z.strictObject({
  apiVersion: api,
  kind: z.literal('UpgradeConfiguration'),
  apply: z.strictObject({ patches }).optional(),
  node: z.strictObject({ patches }).optional(),
  timeouts: timeouts.optional(),
});

/** The KubeletConfiguration fields kubemix sets (kubelet.config.k8s.io/v1beta1). */
export const kubeletConfiguration = z.strictObject({
  apiVersion: z.literal('kubelet.config.k8s.io/v1beta1'),
  kind: z.literal('KubeletConfiguration'),
  cgroupDriver: z.enum(['systemd', 'cgroupfs']),
  failSwapOn: z.boolean(),
});

export const KUBEADM_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  InitConfiguration: initConfiguration,
  ClusterConfiguration: clusterConfiguration,
  JoinConfiguration: joinConfiguration,
  UpgradeConfiguration: upgradeConfiguration,
  KubeletConfiguration: kubeletConfiguration,
};
