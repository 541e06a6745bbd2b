// Shared shell for the libvirt driver's tasks on a hypervisor: the names of
// the contract, one `v` (virsh on the hypervisor's URI) and `fail`.
import { shell, shellCode, shellLines, type ShellText } from '../../../util/escape/index.js';
import type { DriverHypervisor, DriverModel, TaskRef } from '../../types.js';
import { clusterPool, definitionsDir, IMAGE_CACHE } from '../layout.js';
import { clusterIdentity, networkName, poolPath } from '../names.js';

export const PREPARE = 'task-prepare-hypervisors';
export const NETWORK = 'task-create-network';

/** No script text: an empty piece a template may leave out (an empty string would be the word ''). */
export const NOTHING = shellCode('');

export function ref(stage: typeof PREPARE | typeof NETWORK, host: string, name: string): TaskRef {
  return { stage, host, name };
}

/**
 * A task script: the contract's names it uses (only those, so no variable is
 * left unused), `v` (virsh on the hypervisor's URI) and `fail`, then `body`.
 */
export function script(model: DriverModel, hv: DriverHypervisor, body: ShellText): ShellText {
  const id = clusterIdentity(model.cluster);
  const vars: [string, string][] = [
    ['dir', definitionsDir(model)],
    ['pool', clusterPool(model)],
    ['pool_path', poolPath(id)],
    ['net', networkName(id)],
    ['cache', IMAGE_CACHE],
  ];
  const used = vars.filter(([name]) => new RegExp(`\\$\\{?${name}\\b`).test(body.text));
  return shellLines([
    shell`uri=${hv.libvirtUri}`,
    ...used.map(([name, value]) => shell`${name}=${value}`),
    shellCode('v() { virsh -q -c "$uri" "$@"; }'),
    shellCode('fail() { echo "$*" >&2; exit 2; }'),
    body,
  ]);
}
