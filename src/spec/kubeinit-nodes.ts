// cluster_nodes_spec semantics: every node starts from defaults; each
// override whose when_* conditions match sets attributes; later entries win.
import { DEFAULT_LINUX_DISTRO } from '../matrix/index.js';
import type { KubeinitNodes, KubeinitSpec, NodeAttributes, NodeOverride } from './kubeinit-types.js';

interface KubeinitNode {
  readonly group: 'controller_nodes' | 'compute_nodes' | 'service_nodes';
  attributes: NodeAttributes;
}

export function applyOverrides(spec: KubeinitSpec, overrides: readonly NodeOverride[]): KubeinitNodes {
  const type = spec.driver === 'libvirt' ? 'virtual' : 'existing';
  const nodes: KubeinitNode[] = [
    ...Array.from({ length: spec.controllers }, (): KubeinitNode => ({ group: 'controller_nodes', attributes: {} })),
    ...Array.from({ length: spec.computes }, (): KubeinitNode => ({
      group: 'compute_nodes',
      attributes: { os: DEFAULT_LINUX_DISTRO },
    })),
    { group: 'service_nodes', attributes: {} },
  ];
  for (const override of overrides) {
    for (const node of nodes) {
      const matches =
        (override.group === undefined || override.group === node.group) &&
        (override.type === undefined || override.type === type) &&
        (override.distro === undefined || override.distro === spec.distro);
      if (matches) node.attributes = { ...node.attributes, ...override.set };
    }
  }
  const controllers = nodes.filter((n) => n.group === 'controller_nodes');
  const computes = nodes.filter((n) => n.group === 'compute_nodes');
  const services = nodes.find((n) => n.group === 'service_nodes');
  return {
    controlPlane: { count: spec.controllers, ...renameOs(controllers[0]?.attributes ?? {}, 'distro') },
    workers: groupConsecutive(computes.map((n) => n.attributes)).map((g) => ({
      name: 'compute',
      count: g.count,
      ...g.attributes,
    })),
    services: renameOs(services?.attributes ?? {}, 'distro'),
  };
}

/** Controllers and the services node call their OS `distro` in the spec. */
function renameOs(attributes: NodeAttributes, key: 'distro'): Record<string, unknown> {
  const { os, ...rest } = attributes;
  return { ...(os === undefined ? {} : { [key]: os }), ...rest };
}

function groupConsecutive(list: readonly NodeAttributes[]): { count: number; attributes: NodeAttributes }[] {
  const groups: { count: number; attributes: NodeAttributes }[] = [];
  for (const attributes of list) {
    const last = groups[groups.length - 1];
    if (last !== undefined && JSON.stringify(last.attributes) === JSON.stringify(attributes)) last.count += 1;
    else groups.push({ count: 1, attributes });
  }
  return groups;
}
