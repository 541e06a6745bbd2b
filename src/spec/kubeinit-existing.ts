// `k8s-existing-…` strings: the hosts already exist at the addresses kubemix
// would have given them on the default node network.
import { allocateAddresses, defaultGateway } from '../net/addresses.js';
import { parseCidr } from '../net/cidr.js';
import { DEFAULT_LINUX_DISTRO } from '../matrix/index.js';
import type { KubeinitNodes } from './kubeinit-types.js';
import { NAME_PREFIX, twoDigits } from './nodes.js';

const DEFAULT_NODE_CIDR = '10.0.0.0/24';

export function existingHostsFor(nodes: KubeinitNodes): Record<string, unknown>[] {
  const net = parseCidr(DEFAULT_NODE_CIDR);
  if (net === undefined) return [];
  const cpCount = Number(nodes.controlPlane.count);
  const cpOs = String(nodes.controlPlane.distro ?? DEFAULT_LINUX_DISTRO);
  const hosts: { name: string; roles: string[]; os: string }[] = [];
  for (let i = 1; i <= cpCount; i += 1)
    hosts.push({ name: `${NAME_PREFIX.controller}-${twoDigits(i)}`, roles: ['control-plane'], os: cpOs });
  let n = 0;
  for (const group of nodes.workers) {
    for (let i = 0; i < Number(group.count); i += 1) {
      n += 1;
      hosts.push({ name: `compute-${twoDigits(n)}`, roles: ['worker'], os: String(group.os) });
    }
  }
  hosts.push({ name: `${NAME_PREFIX.services}-01`, roles: ['services'], os: String(nodes.services.distro ?? cpOs) });
  const ips = allocateAddresses(
    net,
    defaultGateway(net),
    hosts.map((h) => h.roles[0] ?? 'worker'),
  );
  return hosts.map((h, i) => ({ name: h.name, address: ips[i], roles: h.roles, os: h.os }));
}
