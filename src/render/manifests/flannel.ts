// flannel for the cluster, our own rendering of the upstream kube-flannel
// objects (flannel-io/flannel Documentation/kube-flannel.yml): pinned images, vxlan VNI 4096 / port 4789 from
// the first start (Windows requires them; changing later is disruptive), the
// DaemonSet only on Linux nodes (Windows runs its own HostProcess DaemonSet,
// windows-hostprocess.ts).
import { IMAGES } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';

export const FLANNEL_NAMESPACE = 'kube-flannel';
/** The Linux DaemonSet running flanneld (kube-flannel.yml's name). */
export const FLANNEL_DAEMONSET = 'kube-flannel-ds';
type Obj = Record<string, unknown>;

export function netConf(model: ClusterModel): string {
  const { ipv4, ipv6 } = model.podNetworks;
  const vxlan = model.overlay.vxlan;
  const backend = vxlan === undefined ? { Type: 'host-gw' } : { Type: 'vxlan', VNI: vxlan.vni, Port: vxlan.port };
  const dualStack = ipv6 === undefined ? {} : { EnableIPv6: true, IPv6Network: ipv6 };
  return `${JSON.stringify({ Network: ipv4, ...dualStack, Backend: backend }, null, 2)}\n`;
}

const CNI_CONF = `${JSON.stringify(
  {
    name: 'cbr0',
    cniVersion: '0.3.1',
    plugins: [
      { type: 'flannel', delegate: { hairpinMode: true, isDefaultGateway: true } },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  },
  null,
  2,
)}\n`;

export function flannelObjects(model: ClusterModel): Obj[] {
  const meta = (name: string, extra: Obj = {}): Obj => ({
    name,
    namespace: FLANNEL_NAMESPACE,
    labels: { app: 'flannel', 'k8s-app': 'flannel', tier: 'node' },
    ...extra,
  });
  return [
    // flanneld needs host networking and NET_ADMIN: the namespace must allow privileged pods.
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: FLANNEL_NAMESPACE,
        labels: { 'k8s-app': 'flannel', 'pod-security.kubernetes.io/enforce': 'privileged' },
      },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('flannel') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'flannel', labels: { 'k8s-app': 'flannel' } },
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'flannel', labels: { 'k8s-app': 'flannel' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'flannel' },
      subjects: [{ kind: 'ServiceAccount', name: 'flannel', namespace: FLANNEL_NAMESPACE }],
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta('kube-flannel-cfg'),
      data: { 'cni-conf.json': CNI_CONF, 'net-conf.json': netConf(model) },
    },
    daemonSet(meta(FLANNEL_DAEMONSET)),
  ];
}

function daemonSet(metadata: Obj): Obj {
  const flannel = `${IMAGES.flannel.repository}:${IMAGES.flannel.tag}`;
  const labels = { app: 'flannel', 'k8s-app': 'flannel', tier: 'node' };
  const hostPath = (name: string, path: string, type?: string): Obj => ({
    name,
    hostPath: { path, ...(type === undefined ? {} : { type }) },
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata,
    spec: {
      selector: { matchLabels: { app: 'flannel', 'k8s-app': 'flannel' } },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          hostNetwork: true,
          priorityClassName: 'system-node-critical',
          serviceAccountName: 'flannel',
          tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
          initContainers: [
            {
              name: 'install-cni-plugin',
              image: `${IMAGES.flannelCniPlugin.repository}:${IMAGES.flannelCniPlugin.tag}`,
              command: ['cp'],
              args: ['-f', '/flannel', '/opt/cni/bin/flannel'],
              volumeMounts: [{ name: 'cni-plugin', mountPath: '/opt/cni/bin' }],
            },
            {
              name: 'install-cni',
              image: flannel,
              command: ['cp'],
              args: ['-f', '/etc/kube-flannel/cni-conf.json', '/etc/cni/net.d/10-flannel.conflist'],
              volumeMounts: [
                { name: 'cni', mountPath: '/etc/cni/net.d' },
                { name: 'flannel-cfg', mountPath: '/etc/kube-flannel/' },
              ],
            },
          ],
          containers: [
            {
              name: 'kube-flannel',
              image: flannel,
              command: ['/opt/bin/flanneld'],
              args: ['--ip-masq', '--kube-subnet-mgr'],
              resources: { requests: { cpu: '100m', memory: '50Mi' } },
              securityContext: { privileged: false, capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } },
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'EVENT_QUEUE_DEPTH', value: '5000' },
              ],
              volumeMounts: [
                { name: 'run', mountPath: '/run/flannel' },
                { name: 'flannel-cfg', mountPath: '/etc/kube-flannel/' },
                { name: 'xtables-lock', mountPath: '/run/xtables.lock' },
              ],
            },
          ],
          volumes: [
            hostPath('run', '/run/flannel'),
            hostPath('cni-plugin', '/opt/cni/bin'),
            hostPath('cni', '/etc/cni/net.d'),
            { name: 'flannel-cfg', configMap: { name: 'kube-flannel-cfg' } },
            hostPath('xtables-lock', '/run/xtables.lock', 'FileOrCreate'),
          ],
        },
      },
    },
  };
}
