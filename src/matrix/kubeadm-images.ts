// The images kubeadm pulls for a configuration kubemix renders, as
// `kubeadm config images list --config` prints them (k8s.io/kubernetes
// cmd/kubeadm/app/images/images.go GetControlPlaneImages): the API server,
// controller manager, scheduler and kube-proxy at the cluster's version,
// then CoreDNS, pause and local etcd at the tags that minor's kubeadm names
// (KubernetesRelease.kubeadmImages). kubemix sets no imageRepository (mirrors
// are containerd's hosts.toml), so every name is registry.k8s.io's; CoreDNS
// sits under coredns/ there. Pure.
import { kubernetesRelease } from './index.js';

export const KUBEADM_IMAGE_REPOSITORY = 'registry.k8s.io';

/** `kubernetes` is a release (`1.36.3`); undefined when the matrix has no such minor. */
export function kubeadmImageRefs(kubernetes: string): string[] | undefined {
  const minor = /^(\d+\.\d+)\.\d+$/.exec(kubernetes)?.[1];
  const release = minor === undefined ? undefined : kubernetesRelease(minor);
  if (release === undefined) return undefined;
  const r = KUBEADM_IMAGE_REPOSITORY;
  const tags = release.kubeadmImages;
  return [
    ...['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kube-proxy'].map(
      (c) => `${r}/${c}:v${kubernetes}`,
    ),
    `${r}/coredns/coredns:${tags.coredns}`,
    `${r}/pause:${tags.pause}`,
    `${r}/etcd:${tags.etcd}`,
  ];
}
