// The `libvirt` driver: VMs kubemix creates on hypervisors reachable over
// SSH. Hypervisors are the hosts that exist before the run; guests are
// reached through their hypervisor and carry host keys pinned before first
// contact (provisioner `kubemix`). kubemix logs in to a guest with the key
// it reaches that hypervisor with (its identityFile, else the ssh-agent):
// the key the guest's seed authorises (secret cluster-ssh-public-key).
import { hopThrough, sshFields } from '../ssh.js';
import { LIBVIRT_TRAITS } from '../traits.js';
import type { Driver, DriverHost } from '../types.js';
import { DEFINITION, libvirtArtifacts } from './artifacts.js';
import { definitionsDir } from './layout.js';
import { guestReadyRef, networkTasks } from './tasks/network.js';
import { prepareTasks } from './tasks/prepare.js';
import { capacityTasks } from './capacity.js';
import { cleanupTasks } from './cleanup.js';
import { downTasks } from './down.js';

export const libvirtDriver: Driver = {
  ...LIBVIRT_TRAITS,
  hosts: (spec, nodes) => {
    const hypervisors = spec.hypervisors.map((h): DriverHost => ({
      name: h.name,
      ...sshFields(h),
      shell: 'sh',
      provisioner: 'user',
    }));
    // Guests sit on the cluster's private network: reach them through their
    // hypervisor, or across several through the gateway hypervisor, the only
    // one with an address on that network (render/overlay.ts).
    const guests = nodes.map((n): DriverHost => {
      const via = spec.hypervisors.length > 1 ? spec.hypervisors[0]?.name : n.hypervisor;
      const hv = spec.hypervisors.find((h) => h.name === via);
      const key = hv?.identityFile;
      return {
        name: n.name,
        address: n.ip,
        port: 22,
        user: n.osFamily === 'windows' ? 'Administrator' : 'root',
        ...(key === undefined ? {} : { identityFile: key }),
        ...(hv === undefined ? {} : { bastion: hopThrough(hv) }),
        shell: n.osFamily === 'windows' ? 'powershell' : 'sh',
        provisioner: 'kubemix',
      };
    });
    return [...hypervisors, ...guests];
  },
  hypervisors: (spec) =>
    spec.hypervisors.map((h) => ({
      name: h.name,
      address: h.address,
      libvirtUri: h.libvirtUri,
      domainType: h.domainType,
    })),
  tasks: (model) => [...prepareTasks(model), ...cleanupTasks(model), ...capacityTasks(model), ...networkTasks(model)],
  downTasks,
  artifacts: libvirtArtifacts,
  installMedia: (node, model) =>
    node.osFamily === 'windows' && node.hypervisor !== undefined
      ? { host: node.hypervisor, dir: `${definitionsDir(model)}/${DEFINITION.media(node)}` }
      : undefined,
  nodeReady: (node, model) => [guestReadyRef(node, model)],
  placements: (model) =>
    model.hypervisors.map((h) => ({
      name: h.name,
      address: h.address,
      nodes: model.nodes.filter((n) => n.hypervisor === h.name).map((n) => n.name),
    })),
};
