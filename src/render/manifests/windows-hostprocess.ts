// flanneld (flannel) and kube-proxy (flannel and Calico) on Windows nodes as
// HostProcess DaemonSets, upstream's way (kubernetes-sigs/sig-windows-tools
// hostprocess/): each pod gets its own ServiceAccount token from the kubelet,
// bound to the pod (and, since 1.32, naming its Node: ServiceAccountTokenPodNodeInfo
// GA), an hour long and renewed by the kubelet at 80 % of its life
// (pkg/kubelet/token/token_manager.go) — per node, short-lived and renewed
// with no kubemix running. A pod's containers run as SYSTEM on the host and
// start a launcher script kubemix places there (render/windows/launchers.ts).
// By default the pods run Microsoft's HostProcess base image and the binaries
// kubemix installed and verified on the host; `spec.windows.hostProcess`
// names images that carry flanneld.exe / kube-proxy.exe at their root instead.
import type { ClusterModel } from '../../model/resolve.js';
import { WINDOWS_TAINT } from '../../model/resolve.js';
import { WIN } from '../windows/paths.js';
import { FLANNEL_NAMESPACE } from './flannel.js';
import { WINDOWS_FLANNEL_SA } from './windows.js';

type Obj = Record<string, unknown>;

/** The HostProcess DaemonSets (flannel's in kube-flannel, kube-proxy's in kube-system); their pods carry `app: NAME`. */
export const HOSTPROCESS_DAEMONSETS = { flannel: 'kube-flannel-ds-windows', kubeProxy: 'kube-proxy-windows' } as const;

/** HostProcess containers run as a host account; SYSTEM runs the launchers and reads the node's files. */
export const HOST_PROCESS_USER = 'NT AUTHORITY\\SYSTEM';

/**
 * The pods' token lifetime, explicit: the default projected token asks for
 * 3607 s, which kube-apiserver extends to a year for pod-bound tokens while
 * --service-account-extend-token-expiration is on (its default;
 * pkg/registry/core/serviceaccount/storage/token.go). 3600 s is taken as asked.
 */
export const POD_TOKEN_SECONDS = 3600;

/** Where client-go's in-cluster config reads the token, CA and namespace (rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
export const TOKEN_VOLUME = 'kube-api-access-1h';

const POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';

function windowsTolerations(): Obj[] {
  const [kv, effect] = WINDOWS_TAINT.split(':');
  const [key, value] = (kv ?? '').split('=');
  return [{ key, operator: 'Equal', value, effect }];
}

/**
 * The pod's own token, its CA and namespace where in-cluster config looks
 * (containerd 1.7+ bind-mounts a HostProcess pod's volumes at their paths:
 * kubernetes.io "Create a Windows HostProcess Pod", Volume mounts).
 */
function tokenVolume(): Obj {
  return {
    name: TOKEN_VOLUME,
    projected: {
      defaultMode: 0o444,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: POD_TOKEN_SECONDS } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  };
}

/** A HostProcess DaemonSet: host network, every container HostProcess as SYSTEM, Windows nodes only, its own token volume. */
function daemonSet(name: string, namespace: string, serviceAccountName: string, container: Obj): Obj {
  // Fresh objects each time: shared ones would come out as YAML anchors and aliases.
  const labels = (): Obj => ({ app: name, 'app.kubernetes.io/managed-by': 'kubemix' });
  const hostProcess = (): Obj => ({ windowsOptions: { hostProcess: true, runAsUserName: HOST_PROCESS_USER } });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace, labels: labels() },
    spec: {
      selector: { matchLabels: { app: name } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: labels() },
        spec: {
          os: { name: 'windows' },
          serviceAccountName,
          // The default token volume's 3607 s would be extended to a year; this one is an hour.
          automountServiceAccountToken: false,
          hostNetwork: true,
          priorityClassName: 'system-node-critical',
          securityContext: hostProcess(),
          nodeSelector: { 'kubernetes.io/os': 'windows' },
          tolerations: windowsTolerations(),
          containers: [
            {
              ...container,
              securityContext: hostProcess(),
              volumeMounts: [{ name: TOKEN_VOLUME, mountPath: SERVICE_ACCOUNT_DIR, readOnly: true }],
            },
          ],
          volumes: [tokenVolume()],
        },
      },
    },
  };
}

const fieldEnv = (name: string, fieldPath: string): Obj => ({ name, valueFrom: { fieldRef: { fieldPath } } });

/** The API server by address: the kubernetes Service VIP needs kube-proxy, which needs the API first. */
function apiEnv(model: ClusterModel): Obj[] {
  const api = model.cluster.apiEndpoint;
  return [
    { name: 'KUBERNETES_SERVICE_HOST', value: api.address },
    { name: 'KUBERNETES_SERVICE_PORT', value: String(api.port) },
  ];
}

/** powershell.exe running a launcher kubemix placed on the host. */
function launch(script: string): Obj {
  return {
    command: [POWERSHELL],
    args: ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', script],
  };
}

export function hostProcessObjects(model: ClusterModel): Obj[] {
  const hp = model.windowsHostProcess;
  if (hp === undefined) return [];
  const kubeProxy = daemonSet(HOSTPROCESS_DAEMONSETS.kubeProxy, 'kube-system', 'kube-proxy', {
    name: 'kube-proxy',
    image: hp.kubeProxyImage,
    ...launch(WIN.kubeProxyLauncher),
    env: [fieldEnv('NODE_NAME', 'spec.nodeName'), ...apiEnv(model)],
  });
  if (model.overlay.plugin !== 'flannel') return [kubeProxy];
  const flannel = daemonSet(HOSTPROCESS_DAEMONSETS.flannel, FLANNEL_NAMESPACE, WINDOWS_FLANNEL_SA, {
    name: 'kube-flannel',
    image: hp.flannelImage,
    ...launch(WIN.flanneldLauncher),
    env: [fieldEnv('NODE_NAME', 'spec.nodeName'), fieldEnv('NODE_IP', 'status.hostIP'), ...apiEnv(model)],
  });
  return [flannel, kubeProxy];
}
