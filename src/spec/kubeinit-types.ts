// The words the Kubeinit interop speaks: the parsed spec string, the
// cluster_nodes_spec overrides and the node groups they produce.

export interface KubeinitSpec {
  readonly distro: 'k8s';
  readonly driver: 'libvirt' | 'existing';
  readonly controllers: number;
  readonly computes: number;
  readonly hypervisors: number;
}

export interface NodeAttributes {
  readonly os?: string;
  readonly vcpus?: number;
  readonly ram?: string;
  readonly disk?: string;
}

export interface NodeOverride {
  readonly group?: string;
  readonly type?: string;
  readonly distro?: string;
  readonly set: NodeAttributes;
}

export interface KubeinitNodes {
  readonly controlPlane: Record<string, unknown>;
  readonly workers: Record<string, unknown>[];
  readonly services: Record<string, unknown>;
}
