// The list of nodes a spec asks for, named and in address order (controllers,
// then workers in group order, services node last), before any address is
// assigned. Validation rules and the model both start from it.
import { driverTraits } from '../drivers/traits.js';
import { isWindowsOs } from './normalise.js';
import type { ClusterSpec, Resources, SshTarget } from './types.js';

export type Role = 'control-plane' | 'worker' | 'services';

export interface NodeDraft {
  readonly name: string;
  readonly role: Role;
  readonly os: string;
  /** Planned machine size; absent for existing hosts (measured at gather-facts). */
  readonly resources?: Resources;
  /** Spec path of the field that made this node (for messages). */
  readonly path: string;
  /** existing driver: the node IP the user gave. */
  readonly ip?: string;
  /** existing driver: the MAC the services node's DHCP reserves the node IP for. */
  readonly mac?: string | undefined;
  /** existing driver: how to reach it. */
  readonly ssh?: SshTarget;
  /** existing driver: a control-plane host that is also a worker. */
  readonly alsoWorker: boolean;
  /** libvirt driver: the hypervisor the spec pins this node to, and the spec path that says so. */
  readonly pin?: { readonly hypervisor: string; readonly path: string };
}

export const NAME_PREFIX = { controller: 'controller', services: 'service' } as const;

export function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

export function draftNodes(spec: ClusterSpec): NodeDraft[] {
  return driverTraits(spec.driver).createsMachines ? groupDrafts(spec) : existingDrafts(spec);
}

function groupDrafts(spec: ClusterSpec): NodeDraft[] {
  const nodes: NodeDraft[] = [];
  for (let i = 1; i <= spec.controlPlane.count; i += 1) {
    const name = `${NAME_PREFIX.controller}-${twoDigits(i)}`;
    nodes.push({
      name,
      role: 'control-plane',
      os: spec.controlPlane.distro,
      resources: spec.controlPlane.resources,
      path: 'spec.nodes.controlPlane',
      alsoWorker: false,
      ...pinOf(spec, name, spec.controlPlane.hypervisor, 'spec.nodes.controlPlane.hypervisor'),
    });
  }
  const counters = new Map<string, number>();
  spec.workers.forEach((group, g) => {
    for (let i = 0; i < group.count; i += 1) {
      const n = (counters.get(group.name) ?? 0) + 1;
      counters.set(group.name, n);
      const name = `${group.name}-${twoDigits(n)}`;
      nodes.push({
        name,
        role: 'worker',
        os: group.os,
        resources: group.resources,
        path: `spec.nodes.workers[${g}]`,
        alsoWorker: false,
        ...pinOf(spec, name, group.hypervisor, `spec.nodes.workers[${g}].hypervisor`),
      });
    }
  });
  if (spec.services.enabled) {
    const name = `${NAME_PREFIX.services}-01`;
    nodes.push({
      name,
      role: 'services',
      os: spec.services.distro,
      resources: spec.services.resources,
      path: 'spec.services',
      alsoWorker: false,
      ...pinOf(spec, name, spec.services.hypervisor, 'spec.services.hypervisor'),
    });
  }
  return nodes;
}

/** A node's own pin (spec.nodes.placement) wins over its group's. */
function pinOf(spec: ClusterSpec, name: string, group: string | undefined, groupPath: string): Pick<NodeDraft, 'pin'> {
  const own = spec.placement[name];
  if (own !== undefined) return { pin: { hypervisor: own, path: `spec.nodes.placement.${name}` } };
  return group === undefined ? {} : { pin: { hypervisor: group, path: groupPath } };
}

const ROLE_ORDER: readonly Role[] = ['control-plane', 'worker', 'services'];

function existingDrafts(spec: ClusterSpec): NodeDraft[] {
  const drafts = spec.hosts.map((host, i): NodeDraft & { order: number } => {
    const role = ROLE_ORDER.find((r) => host.roles.includes(r)) ?? 'worker';
    const { name, ip, mac, os, roles, ...ssh } = host;
    return {
      name,
      role,
      os,
      path: `spec.infrastructure.hosts[${i}]`,
      ip,
      ...(mac === undefined ? {} : { mac }),
      ssh,
      alsoWorker: role === 'control-plane' && roles.includes('worker'),
      order: ROLE_ORDER.indexOf(role) * 1e6 + i,
    };
  });
  // Same order as generated clusters: control plane, workers, services.
  return drafts.sort((a, b) => a.order - b.order).map(({ order: _order, ...d }) => d);
}

export function isWindowsNode(node: { readonly os: string }): boolean {
  return isWindowsOs(node.os);
}
