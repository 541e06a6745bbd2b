// Shared shell for the libvirt driver's tasks on a hypervisor: the names of
// the contract, one `v` (virsh on the hypervisor's URI) and `fail`.
import { shellQuote as q } from '../../../util/escape/index.js';
import type { DriverHypervisor, DriverModel, TaskRef } from '../../types.js';
import { clusterPool, definitionsDir, IMAGE_CACHE } from '../layout.js';
import { clusterIdentity, networkName, poolPath } from '../names.js';

export const PREPARE = 'task-prepare-hypervisors';
export const NETWORK = 'task-create-network';

export function ref(stage: typeof PREPARE | typeof NETWORK, host: string, name: string): TaskRef {
  return { stage, host, name };
}

/**
 * A task script: the contract's names it uses (only those, so no variable is
 * left unused), `v` (virsh on the hypervisor's URI) and `fail`, then `body`.
 */
export function script(model: DriverModel, hv: DriverHypervisor, body: string): string {
  const id = clusterIdentity(model.cluster);
  const vars: [string, string][] = [
    ['dir', definitionsDir(model)],
    ['pool', clusterPool(model)],
    ['pool_path', poolPath(id)],
    ['net', networkName(id)],
    ['cache', IMAGE_CACHE],
  ];
  const used = vars.filter(([name]) => new RegExp(`\\$\\{?${name}\\b`).test(body));
  return `uri=${q(hv.libvirtUri)}
${used.map(([name, value]) => `${name}=${q(value)}\n`).join('')}v() { virsh -q -c "$uri" "$@"; }
fail() { echo "$*" >&2; exit 2; }
${body}`;
}
