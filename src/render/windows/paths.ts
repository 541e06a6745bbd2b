// Where everything lives on a Windows worker. Absolute paths with the drive
// letter throughout: kubeadm and the kubelet resolve `/etc/...` against the
// current drive, which is not C: for every service or SSH session.

export const WIN = {
  root: 'C:\\k',
  bin: 'C:\\k\\bin',
  cache: 'C:\\k\\cache',
  kubemix: 'C:\\k\\kubemix',
  bootScript: 'C:\\k\\kubemix\\boot.ps1',
  resetScript: 'C:\\k\\kubemix\\reset.ps1',
  containerdDir: 'C:\\Program Files\\containerd',
  containerdConfig: 'C:\\Program Files\\containerd\\config.toml',
  containerdCerts: 'C:\\ProgramData\\containerd\\certs.d',
  containerdRoot: 'C:\\ProgramData\\containerd\\root',
  containerdState: 'C:\\ProgramData\\containerd\\state',
  cniBin: 'C:\\opt\\cni\\bin',
  cniConfDir: 'C:\\etc\\cni\\net.d',
  cniConf: 'C:\\etc\\cni\\net.d\\10-flannel.conf',
  cniState: 'C:\\var\\lib\\cni\\networks',
  flannelNetConf: 'C:\\etc\\kube-flannel\\net-conf.json',
  subnetEnv: 'C:\\run\\flannel\\subnet.env',
  /** Left by earlier kubemix versions (flanneld as a WinSW service with a minted token): removed on sight. */
  flanneldDir: 'C:\\k\\flanneld',
  flanneldServiceXml: 'C:\\k\\flanneld\\flanneld-service.xml',
  flanneldKubeconfig: 'C:\\k\\flanneld\\kubeconfig.conf',
  flanneldToken: 'C:\\k\\flanneld\\token',
  /** What the flanneld and kube-proxy HostProcess pods start (launchers.ts). */
  flanneldLauncher: 'C:\\k\\kubemix\\flanneld-start.ps1',
  kubeProxyLauncher: 'C:\\k\\kubemix\\kube-proxy-start.ps1',
  kubeletDir: 'C:\\var\\lib\\kubelet',
  kubeletConfig: 'C:\\var\\lib\\kubelet\\config.yaml',
  kubeletCertDir: 'C:\\var\\lib\\kubelet\\pki',
  kubeadmFlags: 'C:\\var\\lib\\kubelet\\kubeadm-flags.env',
  kubeletPkiLink: 'C:\\var\\lib\\kubelet\\etc\\kubernetes\\pki',
  kubernetesDir: 'C:\\etc\\kubernetes',
  pki: 'C:\\etc\\kubernetes\\pki',
  caCert: 'C:\\etc\\kubernetes\\pki\\ca.crt',
  bootstrapKubeconfig: 'C:\\etc\\kubernetes\\bootstrap-kubelet.conf',
  kubeletKubeconfig: 'C:\\etc\\kubernetes\\kubelet.conf',
  joinConfig: 'C:\\etc\\kubemix\\join-configuration.yaml',
  patchesDir: 'C:\\etc\\kubemix\\kubeadm-patches',
  kubeletPatch: 'C:\\etc\\kubemix\\kubeadm-patches\\kubeletconfiguration+merge.yaml',
  kubeProxyDir: 'C:\\k\\kube-proxy',
  /** Left by earlier kubemix versions (kube-proxy as a service with a minted token): removed on sight. */
  kubeProxyKubeconfig: 'C:\\k\\kube-proxy\\kubeconfig.conf',
  kubeProxyToken: 'C:\\k\\kube-proxy\\token',
  kubeProxyConfigTemplate: 'C:\\k\\kube-proxy\\config.template.yaml',
  kubeProxyConfig: 'C:\\k\\kube-proxy\\config.yaml',
  sourceVipFile: 'C:\\k\\kube-proxy\\source-vip.json',
  logs: 'C:\\var\\log',
} as const;

/** The containerd CRI endpoint on Windows: containerd's default named pipe (containerd defaults_windows.go). */
export const CONTAINERD_PIPE = 'npipe:////./pipe/containerd-containerd';

/** Placeholder the source-VIP task replaces at run time; never an address at plan time. */
export const SOURCE_VIP_PLACEHOLDER = '@SOURCE_VIP@';
