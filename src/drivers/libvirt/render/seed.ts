// The NoCloud seed of a Linux guest (cloud-init's "cidata" volume): meta-data
// names the instance, network-config (version 2) brings up the NIC with the
// planned MAC by DHCP (libvirt's reservation gives it the planned address),
// user-data sets the host name, points it at the node's planned address in
// /etc/hosts, lets the deployer's key log in as root and installs a
// pre-generated SSH host key (base64, one line), so the deployer pins its public
// half before first contact. Keys are `{{secret:NAME}}` references: the
// executor fills them in when it writes the files (0600), never the plan.
// Formats: https://cloudinit.readthedocs.io/en/latest/reference/datasources/nocloud.html
// and https://cloudinit.readthedocs.io/en/latest/reference/network-config-format-v2.html
import { CLUSTER_SSH_PUBLIC_KEY, sshHostKeyBase64Secret } from '../../secret-names.js';
import { yamlString as y } from '../../../util/escape/index.js';
import type { DriverModel, DriverNode } from '../../types.js';

export const SEED_FILES = ['meta-data', 'user-data', 'network-config'] as const;
export type SeedFile = (typeof SEED_FILES)[number];

export function seedFiles(model: DriverModel, node: DriverNode): Record<SeedFile, string> {
  return {
    'meta-data': metaData(model, node),
    'user-data': userData(model, node),
    'network-config': networkConfig(node),
  };
}

function fqdn(model: DriverModel, node: DriverNode): string {
  return `${node.name}.${model.cluster.name}.${model.cluster.domain}`;
}

function metaData(model: DriverModel, node: DriverNode): string {
  return `instance-id: ${y(fqdn(model, node))}
local-hostname: ${y(node.name)}
`;
}

function userData(model: DriverModel, node: DriverNode): string {
  return `#cloud-config
hostname: ${y(node.name)}
fqdn: ${y(fqdn(model, node))}
prefer_fqdn_over_hostname: false
# /etc/hosts is not cloud-init's: \`manage_etc_hosts: true\` re-renders it from a template on every boot with this
# host's names on 127.0.1.1 (cloud-init's update_etc_hosts module), so kubelet and kubeadm would take the node
# name for loopback. The names point at the planned address from the first boot on instead (the write_files
# entry, once per instance); host prep's etc-hosts task adds the cluster's block later.
manage_etc_hosts: false
disable_root: false
users:
  - name: root
    lock_passwd: true
    ssh_authorized_keys:
      - ${y(`{{secret:${CLUSTER_SSH_PUBLIC_KEY}}}`)}
ssh_pwauth: false
# The host key is ours, written before the ssh module runs (write_files is an
# earlier cloud_init_modules entry); cloud-init keeps it (an existing key file is
# never regenerated) and makes no other type.
ssh_deletekeys: false
ssh_genkeytypes: [ed25519]
write_files:
  - path: /etc/hosts
    append: true
    permissions: '0644'
    content: ${y(`${node.ip} ${fqdn(model, node)} ${node.name}\n`)}
  - path: /etc/ssh/ssh_host_ed25519_key
    owner: root:root
    permissions: '0600'
    encoding: b64
    content: ${y(`{{secret:${sshHostKeyBase64Secret(node.name)}}}`)}
package_update: false
package_upgrade: false
`;
}

function networkConfig(node: DriverNode): string {
  return `network:
  version: 2
  ethernets:
    nic0:
      match:
        macaddress: ${y(node.mac ?? '')}
      set-name: ${y('eth0')}
      dhcp4: true
`;
}
