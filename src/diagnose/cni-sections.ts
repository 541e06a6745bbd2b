// The sections `diagnose` adds for a pod network that runs as pods: Calico
// (calico-node on Linux, the HostProcess DaemonSet calico-node-windows on
// Windows, both the Tigera operator's, in calico-system) and HostProcess
// flannel (kube-flannel-ds-windows and kube-proxy-windows). Their logs are
// read where the kubelet writes every container's log,
// `<podLogsDir>/<namespace>_<pod>_<uid>/<container>/<restart>.log`
// (/var/log/pods, C:\var\log\pods on Windows), so they are there even when
// the API server is not; the first control plane adds the API's view
// (TigeraStatus, the pods' logs through kubectl). Pure.
import type { ClusterModel } from '../model/resolve.js';
import { CALICO_NAMESPACE, CALICO_WINDOWS_DAEMONSET } from '../render/manifests/calico.js';
import { FLANNEL_NAMESPACE } from '../render/manifests/flannel.js';
import { HOSTPROCESS_DAEMONSETS } from '../render/manifests/windows-hostprocess.js';
import { q } from '../render/windows/ps.js';
import { shell, shellCode, shellLines, type ShellText } from '../util/escape/index.js';
import type { PowerShellSection, Section } from './types.js';

export const KUBECTL = shellCode('kubectl --kubeconfig=/etc/kubernetes/admin.conf');
/** The Windows CNI plugin's log directory the Installation sets (windowsNodes.cniLogDir). */
export const CALICO_CNI_LOG_DIR = 'C:\\var\\log\\calico\\cni';
/** The VXLAN device calico-node creates on Linux (Felix's default name). */
export const CALICO_LINUX_VXLAN = 'vxlan.calico';

/** The newest log of every container of the pods whose directory starts `<namespace>_<prefix>` (Linux). */
export function linuxPodLogs(namespace: string, prefix: string, lines = 100, root = '/var/log/pods'): ShellText {
  // Each value one word (quoted if it must be); the `*` after them stays a glob.
  return shell`for d in ${root}/${namespace}_${prefix}*/*/; do f=$(ls -t "$d"*.log 2>/dev/null | head -n 1); [ -n "$f" ] || continue; echo "# $f"; tail -n ${lines} "$f"; done`;
}

/** The same on Windows, under C:\var\log\pods. */
export function windowsPodLogs(namespace: string, prefix: string, lines = 100): string {
  return `Get-ChildItem -Path 'C:\\var\\log\\pods' -Directory -Filter ${q(`${namespace}_${prefix}*`)} -ErrorAction SilentlyContinue | Get-ChildItem -Directory | ForEach-Object { $f = Get-ChildItem -LiteralPath $_.FullName -Filter *.log | Sort-Object LastWriteTime | Select-Object -Last 1; if ($f) { "# $($f.FullName)"; Get-Content -LiteralPath $f.FullName -Tail ${lines} } }`;
}

/** A Linux node of a Calico cluster: calico-node's own log. */
export function linuxCalicoSections(): Section[] {
  return [{ name: 'calico-node-log', command: linuxPodLogs(CALICO_NAMESPACE, 'calico-node-') }];
}

/** The first control plane's view of the pod network's pods, by CNI. */
export function apiCniSections(model: ClusterModel): Section[] {
  const windows = model.nodes.some((n) => n.osFamily === 'windows');
  const logs = (namespace: string, selector: string, container: readonly string[]): ShellText =>
    shell`${KUBECTL} -n ${namespace} logs -l ${selector} ${container} --tail=100 --prefix --max-log-requests=20`;
  if (model.overlay.plugin === 'calico')
    return [
      { name: 'calico-status', command: shell`${KUBECTL} get tigerastatus` },
      {
        name: 'calico-log',
        command: shellLines(
          [
            logs(CALICO_NAMESPACE, 'k8s-app=calico-node', ['-c', 'calico-node']),
            ...(windows ? [logs(CALICO_NAMESPACE, `k8s-app=${CALICO_WINDOWS_DAEMONSET}`, ['--all-containers'])] : []),
          ],
          '; ',
        ),
      },
      ...(windows
        ? [
            {
              name: 'kube-proxy-windows-log',
              command: logs('kube-system', `app=${HOSTPROCESS_DAEMONSETS.kubeProxy}`, ['--all-containers']),
            },
          ]
        : []),
    ];
  const hostProcess = model.windowsHostProcess !== undefined;
  return [
    {
      name: 'flannel-log',
      command: shellLines(
        [
          shell`${KUBECTL} -n ${FLANNEL_NAMESPACE} logs daemonset/kube-flannel-ds --tail=200`,
          ...(hostProcess
            ? [logs(FLANNEL_NAMESPACE, `app=${HOSTPROCESS_DAEMONSETS.flannel}`, ['--all-containers'])]
            : []),
        ],
        '; ',
      ),
    },
    ...(hostProcess
      ? [
          {
            name: 'kube-proxy-windows-log',
            command: logs('kube-system', `app=${HOSTPROCESS_DAEMONSETS.kubeProxy}`, ['--all-containers']),
          },
        ]
      : []),
  ];
}

/** A Windows worker's pod-network pods: calico-node-windows and its CNI plugin's log, or HostProcess flannel's. */
export function windowsCniSections(model: ClusterModel): PowerShellSection[] {
  if (model.overlay.plugin === 'calico')
    return [
      { name: 'calico-node-log', command: windowsPodLogs(CALICO_NAMESPACE, `${CALICO_WINDOWS_DAEMONSET}-`) },
      {
        name: 'calico-cni-log',
        command: `Get-ChildItem -LiteralPath ${q(CALICO_CNI_LOG_DIR)} -Filter *.log | Sort-Object LastWriteTime | Select-Object -Last 1 | ForEach-Object { Get-Content -LiteralPath $_.FullName -Tail 100 }`,
      },
      { name: 'kube-proxy-pod-log', command: windowsPodLogs('kube-system', `${HOSTPROCESS_DAEMONSETS.kubeProxy}-`) },
    ];
  if (model.windowsHostProcess === undefined) return [];
  return [
    { name: 'flannel-pod-log', command: windowsPodLogs(FLANNEL_NAMESPACE, `${HOSTPROCESS_DAEMONSETS.flannel}-`) },
    { name: 'kube-proxy-pod-log', command: windowsPodLogs('kube-system', `${HOSTPROCESS_DAEMONSETS.kubeProxy}-`) },
  ];
}
