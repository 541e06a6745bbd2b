// kubeadm, kubelet, kubectl and crictl installed from upstream's release
// files (`spec.kubernetes.install: binaries`), laid out the way upstream's
// packages lay them out (kubernetes/release cmd/krel/templates/latest:
// kubelet/kubelet.service, kubeadm/10-kubeadm.conf, kubelet/kubelet.env), with
// the binaries in /usr/local/bin and the units in /etc/systemd/system, as
// kubernetes.io's "Installing kubeadm … without a package manager" does: a
// package installed later owns /usr/bin and /usr/lib/systemd, never these.
// The drop-in reads KUBELET_EXTRA_ARGS from /etc/default/kubelet on Debian
// and Ubuntu, /etc/sysconfig/kubelet on RHEL-like systems, as the deb and rpm
// packages do (kubernetes/release#3279 fixed the deb's path).
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../types.js';

export const KUBE_BIN_DIR = '/usr/local/bin';
export const KUBELET_UNIT = '/etc/systemd/system/kubelet.service';
export const KUBEADM_DROP_IN = '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf';

/** The file the drop-in reads KUBELET_EXTRA_ARGS from, per package family. */
export function kubeletEnvFile(family: 'apt' | 'dnf'): string {
  return family === 'apt' ? '/etc/default/kubelet' : '/etc/sysconfig/kubelet';
}

function file(node: PlanNode, remotePath: string, content: string): RenderedArtifact {
  return { node: node.name, remotePath, mode: '0644', owner: 'root:root', content };
}

/**
 * kubelet.service and kubeadm's 10-kubeadm.conf drop-in. The extra-args file itself is the
 * operator's (the drop-in reads it when it exists): kubemix never writes it.
 */
export function renderKubeletUnits(node: PlanNode, family: 'apt' | 'dnf'): RenderedArtifact[] {
  const kubelet = `${KUBE_BIN_DIR}/kubelet`;
  const env = kubeletEnvFile(family);
  return [
    file(
      node,
      KUBELET_UNIT,
      `# Rendered by kubemix (upstream's kubelet.service, binary in ${KUBE_BIN_DIR}); re-plan instead of editing.
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=${kubelet}
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
`,
    ),
    file(
      node,
      KUBEADM_DROP_IN,
      `# Rendered by kubemix (upstream's 10-kubeadm.conf, binary in ${KUBE_BIN_DIR}); re-plan instead of editing.
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# kubeadm init and join write this file, setting KUBELET_KUBEADM_ARGS.
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# The operator's last-resort overrides (KUBELET_EXTRA_ARGS); kubeadm's kubeletExtraArgs come first.
EnvironmentFile=-${env}
ExecStart=
ExecStart=${kubelet} $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
`,
    ),
  ];
}
