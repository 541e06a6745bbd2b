// Optional HostProcess mode: flanneld and kube-proxy on Windows
// nodes as HostProcess DaemonSets from images the user names, instead of as
// services. kubemix renders the DaemonSets and builds no image; an image only
// has to carry `flanneld.exe` / `kube-proxy.exe` at its root. Everything else
// stays kubemix's: net-conf.json, the CNI config and plugins, the External
// network, kube-proxy's config (source VIP reserved on the node) and its
// private kubeconfig are files on the host, which HostProcess containers see.
import type { ClusterModel } from '../../model/resolve.js';
import { WINDOWS_TAINT } from '../../model/resolve.js';
import { flanneldArgs } from '../windows/services.js';
import { WIN } from '../windows/paths.js';
import { FLANNEL_NAMESPACE } from './flannel.js';
import { WINDOWS_FLANNEL_SA } from './windows.js';

type Obj = Record<string, unknown>;

/** The HostProcess DaemonSets (flannel's in kube-flannel, kube-proxy's in kube-system); their pods carry `app: NAME`. */
export const HOSTPROCESS_DAEMONSETS = { flannel: 'kube-flannel-ds-windows', kubeProxy: 'kube-proxy-windows' } as const;

/** hcsshim expands this in a HostProcess container's command line: the image's files. */
const SANDBOX = '$env:CONTAINER_SANDBOX_MOUNT_POINT';
/** HostProcess containers run as a host account; SYSTEM reads kube-proxy's private kubeconfig. */
export const HOST_PROCESS_USER = 'NT AUTHORITY\\SYSTEM';

function windowsTolerations(): Obj[] {
  const [kv, effect] = WINDOWS_TAINT.split(':');
  const [key, value] = (kv ?? '').split('=');
  return [{ key, operator: 'Equal', value, effect }];
}

/** A HostProcess DaemonSet: host network, every container HostProcess as SYSTEM, Windows nodes only. */
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
          hostNetwork: true,
          priorityClassName: 'system-node-critical',
          securityContext: hostProcess(),
          nodeSelector: { 'kubernetes.io/os': 'windows' },
          tolerations: windowsTolerations(),
          containers: [{ ...container, securityContext: hostProcess() }],
        },
      },
    },
  };
}

const fieldEnv = (name: string, fieldPath: string): Obj => ({ name, valueFrom: { fieldRef: { fieldPath } } });

export function hostProcessObjects(model: ClusterModel): Obj[] {
  const images = model.windowsHostProcess;
  if (images === undefined) return [];
  // The service's flags but no kubeconfig: the pod's projected flannel-windows token (in-cluster
  // config). The API by address: the kubernetes Service VIP needs kube-proxy, which starts after flannel.
  const flannelArgs = flanneldArgs({ ip: '$(NODE_IP)' });
  const api = model.cluster.apiEndpoint;
  const flannel = daemonSet(HOSTPROCESS_DAEMONSETS.flannel, FLANNEL_NAMESPACE, WINDOWS_FLANNEL_SA, {
    name: 'kube-flannel',
    image: images.flannelImage,
    command: [`${SANDBOX}\\flanneld.exe`],
    args: flannelArgs,
    env: [
      fieldEnv('NODE_NAME', 'spec.nodeName'),
      fieldEnv('NODE_IP', 'status.hostIP'),
      { name: 'KUBERNETES_SERVICE_HOST', value: api.address },
      { name: 'KUBERNETES_SERVICE_PORT', value: String(api.port) },
    ],
  });
  const kubeProxy = daemonSet(HOSTPROCESS_DAEMONSETS.kubeProxy, 'kube-system', 'kube-proxy', {
    name: 'kube-proxy',
    image: images.kubeProxyImage,
    command: [`${SANDBOX}\\kube-proxy.exe`],
    // The node's own config: hostname, network name and the source VIP reserved on the node.
    args: [`--config=${WIN.kubeProxyConfig}`],
  });
  return [flannel, kubeProxy];
}
