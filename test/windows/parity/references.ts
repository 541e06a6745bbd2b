// Upstream reference configs a Windows worker's files follow, as facts (not
// copies): the settings each reference sets, with its placeholders filled the
// way the upstream script that uses it fills them, and the source named.
// `allowed` lists every way kubemix's rendered file differs, with the reason;
// the parity test fails on any other difference and on a stale allowance.

export interface Reference {
  readonly source: string;
  /** The reference's settings, by JSON path (`a.b[0].c`). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Path → why kubemix differs there. */
  readonly allowed: Readonly<Record<string, string>>;
}

export interface Cluster {
  readonly podCidr: string;
  readonly serviceCidr: string;
  readonly nodeIp: string;
  readonly nodeName: string;
  readonly network: string;
  readonly pause: string;
}

const CNI_VERSION =
  'sig-windows-tools uses cniVersion 0.2.0; kubemix declares 0.3.0, which flannel and the sdn plugins accept (result with ips[]), so host-local answers in the format the source-VIP step parses';
const SDNROUTE =
  "spelling: kubemix uses hcsshim's hcn policy type name SDNRoute; sig-windows-tools writes SDNROUTE (HNS compares the type case-insensitively — both spellings are in use upstream; not verified on a host here)";

/** flannel-io/flannel Documentation/kube-flannel.yml, ConfigMap kube-flannel-cfg, net-conf.json (v0.28). */
export function netConfReference(c: Cluster, backend: 'vxlan' | 'host-gw'): Reference {
  return {
    source:
      'flannel-io/flannel Documentation/kube-flannel.yml (kube-flannel-cfg net-conf.json); Backend.Type per Documentation/backends.md',
    settings: { Network: c.podCidr, EnableNFTables: false, 'Backend.Type': backend },
    allowed: {
      EnableNFTables:
        'iptables vs nftables is a Linux-only choice; flanneld on Windows programs HNS, not netfilter, so the Windows copy omits it',
      ...(backend === 'vxlan'
        ? {
            'Backend.VNI': 'Windows requires VNI 4096 (and it must match the Linux ConfigMap); the Linux default is 1',
            'Backend.Port':
              'Windows uses the IANA VXLAN port 4789 (and it must match Linux); the Linux kernel default is 8472',
          }
        : {}),
    },
  };
}

/**
 * vxlan: kubernetes-sigs/sig-windows-tools hostprocess/flannel/flanneld/flannel-overlay.yml
 * (cni-conf-containerd.json), placeholders filled as its start.ps1 does.
 */
function overlayCni(c: Cluster): Reference {
  return {
    source:
      'kubernetes-sigs/sig-windows-tools hostprocess/flannel/flanneld/flannel-overlay.yml (cni-conf-containerd.json) + start.ps1',
    settings: {
      name: c.network,
      cniVersion: '0.2.0',
      type: 'flannel',
      'capabilities.portMappings': true,
      'capabilities.dns': true,
      'delegate.type': 'sdnoverlay',
      'delegate.AdditionalArgs[0].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[0].Value.Type': 'OutBoundNAT',
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[0]': c.serviceCidr,
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[1]': c.podCidr,
      'delegate.AdditionalArgs[1].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[1].Value.Type': 'SDNROUTE',
      'delegate.AdditionalArgs[1].Value.Settings.DestinationPrefix': c.serviceCidr,
      'delegate.AdditionalArgs[1].Value.Settings.NeedEncap': true,
      'delegate.AdditionalArgs[2].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[2].Value.Type': 'ProviderAddress',
      'delegate.AdditionalArgs[2].Value.Settings.ProviderAddress': c.nodeIp,
    },
    allowed: {
      cniVersion: CNI_VERSION,
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[0]': 'same two exceptions, pod CIDR listed first',
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[1]': 'same two exceptions, service CIDR listed second',
      'delegate.AdditionalArgs[1].Value.Type': SDNROUTE,
    },
  };
}

/**
 * host-gw: kubernetes-sigs/sig-windows-tools kubeadm/flannel/flannel-host-gw.yml
 * (cni-conf-containerd.json), placeholders filled as its run.ps1 does.
 */
function bridgeCni(c: Cluster, nodeCidr: string): Reference {
  return {
    source:
      'kubernetes-sigs/sig-windows-tools kubeadm/flannel/flannel-host-gw.yml (cni-conf-containerd.json) + run.ps1',
    settings: {
      cniVersion: '0.2.0',
      name: c.network,
      type: 'flannel',
      'capabilities.portMappings': true,
      'capabilities.dns': true,
      'delegate.type': 'sdnbridge',
      'delegate.optionalFlags.forceBridgeGateway': true,
      'delegate.AdditionalArgs[0].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[0].Value.Type': 'OutBoundNAT',
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[0]': c.serviceCidr,
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[1]': c.podCidr,
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[2]': nodeCidr,
      'delegate.AdditionalArgs[1].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[1].Value.Type': 'SDNROUTE',
      'delegate.AdditionalArgs[1].Value.Settings.DestinationPrefix': c.serviceCidr,
      'delegate.AdditionalArgs[1].Value.Settings.NeedEncap': true,
      'delegate.AdditionalArgs[2].Name': 'EndpointPolicy',
      'delegate.AdditionalArgs[2].Value.Type': 'SDNROUTE',
      'delegate.AdditionalArgs[2].Value.Settings.DestinationPrefix': `${c.nodeIp}/32`,
      'delegate.AdditionalArgs[2].Value.Settings.NeedEncap': true,
    },
    allowed: {
      cniVersion: CNI_VERSION,
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[0]': 'pod CIDR listed first',
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[1]': 'service CIDR listed second',
      'delegate.AdditionalArgs[0].Value.Settings.Exceptions[2]':
        'the node network is NOT exempt from NAT: pods must be NATed to reach the services node, the gateway and hypervisors, which do not route pod CIDRs (only the upstream L3 routing layout may exempt it)',
      'delegate.AdditionalArgs[1].Value.Type': SDNROUTE,
      'delegate.AdditionalArgs[2].Value.Type': SDNROUTE,
    },
  };
}

export function cniReference(c: Cluster, backend: 'vxlan' | 'host-gw', nodeCidr: string): Reference {
  return backend === 'vxlan' ? overlayCni(c) : bridgeCni(c, nodeCidr);
}

/**
 * kube-proxy: kubernetes-sigs/sig-windows-tools hostprocess/flannel/kube-proxy/start.ps1
 * (flags, here as their KubeProxyConfiguration fields; KUBE_NETWORK → winkernel.networkName).
 */
export function kubeProxyReference(c: Cluster, backend: 'vxlan' | 'host-gw', kubeconfig: string): Reference {
  return {
    source:
      'kubernetes-sigs/sig-windows-tools hostprocess/flannel/kube-proxy/start.ps1 (--proxy-mode, --hostname-override, --source-vip, --kubeconfig, KUBE_NETWORK)',
    settings: {
      mode: 'kernelspace',
      hostnameOverride: c.nodeName,
      'clientConnection.kubeconfig': kubeconfig,
      'winkernel.networkName': c.network,
      ...(backend === 'vxlan' ? { 'winkernel.sourceVip': '@SOURCE_VIP@' } : {}),
    },
    allowed: {
      apiVersion: 'kubemix writes a config file (kubeproxy.config.k8s.io/v1alpha1) instead of flags',
      kind: 'the config file names its kind',
      bindAddress: "explicit 0.0.0.0, kube-proxy's default",
      'clientConnection.kubeconfig':
        "no kubeconfig: in-cluster config with the pod's own projected token (sig-windows-tools copies the kubeadm kube-proxy ConfigMap's kubeconfig, which names the same projected token)",
      clusterCIDR:
        'set so kube-proxy knows which traffic is cluster-internal (the kubeadm Linux kube-proxy ConfigMap sets it too)',
      'winkernel.enableDSR': 'explicit false: DSR stays off (the WinDSR gate is locked on, DSR itself is opt-in)',
    },
  };
}

/**
 * containerd: kubernetes/kubernetes cluster/gce/windows/k8s-node-setup.psm1
 * (Configure_Containerd, containerd 1.x `[plugins.cri]` keys) with each key
 * written under its containerd 2.x name (config version 3; 2.3's version 4
 * keeps the CRI names and moves the server's grpc into a plugin).
 */
export function containerdReference(c: Cluster, cniBin: string, cniConf: string): Reference {
  return {
    source:
      'kubernetes/kubernetes cluster/gce/windows/k8s-node-setup.psm1 (Configure_Containerd), keys renamed to containerd 2.x (config version 4)',
    settings: {
      'plugins.io.containerd.cri.v1.images.pinned_images.sandbox': c.pause,
      'plugins.io.containerd.cri.v1.images.snapshotter': 'windows',
      'plugins.io.containerd.cri.v1.images.discard_unpacked_layers': true,
      'plugins.io.containerd.cri.v1.images.disable_snapshot_annotations': true,
      'plugins.io.containerd.cri.v1.runtime.containerd.default_runtime_name': 'runhcs-wcow-process',
      'plugins.io.containerd.cri.v1.runtime.cni.bin_dirs[0]': cniBin,
      'plugins.io.containerd.cri.v1.runtime.cni.conf_dir': cniConf,
      'plugins.io.containerd.scheduler.v1.scheduler.schedule_delay': '0s',
      'plugins.io.containerd.scheduler.v1.scheduler.startup_delay': '0s',
    },
    allowed: {
      version:
        "the line's own config version (4 for containerd 2.3) must be declared, or containerd migrates it and warns",
      root: "explicit C:\\ProgramData\\containerd\\root, containerd's Windows default",
      state: "explicit C:\\ProgramData\\containerd\\state, containerd's Windows default",
      'plugins.io.containerd.server.v1.grpc.address':
        "explicit \\\\.\\pipe\\containerd-containerd, containerd's Windows default, the pipe the kubelet is pointed at",
      'plugins.io.containerd.cri.v1.images.registry.config_path':
        'mirrors and the services registry live in certs.d hosts.toml files',
      'plugins.io.containerd.cri.v1.runtime.cni.max_conf_num':
        'only the first CNI config is loaded: the directory holds one file by design',
      'plugins.io.containerd.cri.v1.runtime.containerd.runtimes.runhcs-wcow-process.runtime_type':
        "the default runtime's type written out (containerd's Windows default)",
      'plugins.io.containerd.cri.v1.images.snapshotter': "left to containerd's Windows default (windows)",
      'plugins.io.containerd.cri.v1.images.discard_unpacked_layers':
        'kept at the default (false): unpacked layers are kept so a re-pull after a reboot is local',
      'plugins.io.containerd.cri.v1.images.disable_snapshot_annotations': "left at containerd 2.x's default",
      'plugins.io.containerd.scheduler.v1.scheduler.schedule_delay':
        "GC scheduling left at containerd's defaults (GCE tunes it for its image-heavy CI)",
      'plugins.io.containerd.scheduler.v1.scheduler.startup_delay':
        "GC scheduling left at containerd's defaults (GCE tunes it for its image-heavy CI)",
    },
  };
}
