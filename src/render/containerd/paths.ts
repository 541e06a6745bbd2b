// Where containerd and its helpers live on a Linux node. The upstream release
// tarball unpacks into /usr/local (bin/containerd, bin/ctr, shims).
export const CONTAINERD_PATHS = {
  config: '/etc/containerd/config.toml',
  unit: '/etc/systemd/system/containerd.service',
  certsDir: '/etc/containerd/certs.d',
  binary: '/usr/local/bin/containerd',
  runc: '/usr/local/sbin/runc',
  cniBin: '/opt/cni/bin',
  cniConf: '/etc/cni/net.d',
  socket: '/run/containerd/containerd.sock',
} as const;

/** `hosts.toml` directory for a registry host (port kept, as containerd looks it up). */
export function hostsDir(registry: string): string {
  return `${CONTAINERD_PATHS.certsDir}/${registry}`;
}
