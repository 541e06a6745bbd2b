// The `existing` driver: hosts the user already runs. It creates nothing:
// the node list, addresses and MACs are the spec's; every host is checked
// for its OS and size before anything is changed on it.
import { sshFields } from '../ssh.js';
import { EXISTING_TRAITS } from '../traits.js';
import type { Driver } from '../types.js';
import { hostCheckRef, hostCheckTasks } from './checks.js';

export const existingDriver: Driver = {
  ...EXISTING_TRAITS,
  hosts: (spec) =>
    spec.hosts.map((h) => ({
      name: h.name,
      ...sshFields(h),
      shell: h.os.startsWith('windows') ? 'powershell' : 'sh',
      provisioner: 'user',
    })),
  hypervisors: () => [],
  tasks: hostCheckTasks,
  downTasks: () => [],
  artifacts: () => [],
  installMedia: () => undefined,
  nodeReady: (node) => [hostCheckRef(node.name)],
  placements: (model) => [{ name: 'existing hosts', nodes: model.nodes.map((n) => n.name) }],
};
