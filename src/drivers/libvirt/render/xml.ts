// libvirt XML for one cluster on one hypervisor: the storage pool, the NAT
// network with a DHCP reservation per planned MAC, a guest's disk volume (a
// qcow2 overlay on a cached base image) and its domain. Element names and
// attributes follow libvirt's formats (https://libvirt.org/format.html);
// every file passes virt-xml-validate. Pure; every value goes through
// xmlEscape.
import { parseCidr } from '../../../net/cidr.js';
import { xmlEscape as x } from '../../../util/escape/index.js';
import type { DriverHypervisor, DriverModel, DriverNode } from '../../types.js';
import { baseImagePath, installIsoPath, VIRTIO_WIN_ISO, type DomainType } from '../layout.js';
import {
  bridgeName,
  clusterIdentity,
  domainName,
  networkName,
  ownerMetadata,
  poolName,
  poolPath,
  VOLUME_SUFFIXES,
} from '../names.js';
import { gatewayHypervisor, hasOverlay, isGateway } from './overlay.js';

export function poolXml(model: Pick<DriverModel, 'cluster'>): string {
  const id = clusterIdentity(model.cluster);
  return `<pool type='dir'>
  <name>${x(poolName(id))}</name>
  <target>
    <path>${x(poolPath(id))}</path>
    <permissions>
      <mode>0711</mode>
    </permissions>
  </target>
</pool>
`;
}

/**
 * The cluster network: NAT to the outside through the hypervisor, the
 * gateway on the bridge, and libvirt's dnsmasq answering DHCP with one
 * static reservation per guest and no dynamic range, so only planned MACs
 * get an address. It is the only DHCP server on the segment: the services
 * node's own DHCP stays off for VMs the driver creates. DNS for the
 * cluster's domain is forwarded to the services node once it runs. With
 * several hypervisors this is the gateway hypervisor's network; the others
 * attach their guests to their end of the VXLAN mesh (render/overlay.ts).
 */
export function networkXml(model: DriverModel, hv: DriverHypervisor = gatewayHypervisor(model)): string {
  const id = clusterIdentity(model.cluster);
  if (hasOverlay(model) && !isGateway(model, hv)) return bridgedNetworkXml(model);
  const { nodeCidr, gateway, nodeMtu } = model.cluster.network;
  const net = parseCidr(nodeCidr);
  if (net === undefined || net.family !== 4) throw new Error(`libvirt network: ${nodeCidr} is not an IPv4 network`);
  const services = model.nodes.find((n) => n.role === 'services');
  const zone = `${model.cluster.name}.${model.cluster.domain}`;
  const hosts = model.nodes
    .filter((n) => n.mac !== undefined)
    .map((n) => `      <host mac='${x(n.mac ?? '')}' name='${x(n.name)}' ip='${x(n.ip)}'/>`);
  const dns =
    services === undefined
      ? ''
      : `  <dns>
    <forwarder domain='${x(zone)}' addr='${x(services.ip)}'/>
  </dns>
`;
  return `<network>
  <name>${x(networkName(id))}</name>
  <metadata>
    ${ownerMetadata(x(id))}
  </metadata>
  <forward mode='nat'/>
  <bridge name='${x(bridgeName(id))}' stp='on' delay='0'/>
  <mtu size='${x(String(nodeMtu))}'/>
  <domain name='${x(zone)}' localOnly='no'/>
${dns}  <ip address='${x(gateway)}' prefix='${x(String(net.prefix))}'>
    <dhcp>
${hosts.join('\n')}
    </dhcp>
  </ip>
</network>
`;
}

/**
 * A hypervisor other than the gateway: guests join the bridge the overlay
 * script makes (no address, no DHCP, no NAT here: the gateway's answer
 * across the mesh). Marked like every network of the cluster. No `<mtu>`:
 * libvirt refuses it in bridge mode ("mtu size only allowed in open,
 * route, nat, and isolated mode"; its schema accepts it); the overlay
 * script gives the bridge the node MTU and libvirt sizes the guests' taps
 * to the bridge.
 */
function bridgedNetworkXml(model: DriverModel): string {
  const id = clusterIdentity(model.cluster);
  return `<network>
  <name>${x(networkName(id))}</name>
  <metadata>
    ${ownerMetadata(x(id))}
  </metadata>
  <forward mode='bridge'/>
  <bridge name='${x(bridgeName(id))}'/>
</network>
`;
}

/** A guest's disk: a qcow2 overlay on the cached base image (Linux) or an empty disk (Windows installs from ISO). */
export function volumeXml(node: DriverNode): string {
  const size = node.resources?.diskGiB ?? 0;
  const backing =
    node.osFamily === 'linux'
      ? `  <backingStore>
    <path>${x(baseImagePath(node.os))}</path>
    <format type='qcow2'/>
  </backingStore>
`
      : '';
  return `<volume type='file'>
  <name>${x(`${domainName(node)}${VOLUME_SUFFIXES.disk}`)}</name>
  <capacity unit='GiB'>${size}</capacity>
  <target>
    <format type='qcow2'/>
    <permissions>
      <mode>0600</mode>
    </permissions>
  </target>
${backing}</volume>
`;
}

/** A guest's domain with its planned MAC and size, serial console, and VNC on the hypervisor's loopback only. */
export function domainXml(model: DriverModel, node: DriverNode, type: DomainType): string {
  const id = clusterIdentity(model.cluster);
  const windows = node.osFamily === 'windows';
  const r = node.resources ?? { vcpus: 1, ramMiB: 1024, diskGiB: 0 };
  const media = `${domainName(node)}${windows ? VOLUME_SUFFIXES.unattend : VOLUME_SUFFIXES.cloudInit}`;
  const mediaSource = `<source pool='${x(poolName(id))}' volume='${x(media)}'/>`;
  const cdroms = windows
    ? [
        cdrom(`<source file='${x(installIsoPath(node.os))}'/>`, 'sda', 'file', 2),
        cdrom(mediaSource, MEDIA_TARGET, 'volume'),
        cdrom(`<source file='${x(VIRTIO_WIN_ISO)}'/>`, 'sdc'),
      ]
    : [seedDisk(mediaSource)];
  // Windows boots its disk first and the install ISO second, nothing else (per-device
  // boot order, libvirt formatdomain "BIOS bootloader"): the empty disk falls through
  // to Setup once; once installed, the disk wins.
  return `<domain type='${x(type)}'>
  <name>${x(domainName(node))}</name>
  <metadata>
    ${ownerMetadata(x(id))}
  </metadata>
  <memory unit='MiB'>${r.ramMiB}</memory>
  <vcpu placement='static'>${r.vcpus}</vcpu>
  <os${windows ? " firmware='efi'" : ''}>
    <type arch='x86_64' machine='q35'>hvm</type>
${windows ? '' : "    <boot dev='hd'/>\n"}  </os>
  <features>
    <acpi/>
    <apic/>
  </features>
${type === 'kvm' ? "  <cpu mode='host-passthrough'/>\n" : ''}  <clock offset='${x(windows ? 'localtime' : 'utc')}'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='volume' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source pool='${x(poolName(id))}' volume='${x(`${domainName(node)}${VOLUME_SUFFIXES.disk}`)}'/>
      <target dev='vda' bus='virtio'/>
${windows ? "      <boot order='1'/>\n" : ''}    </disk>
${cdroms.join('')}    <interface type='network'>
      <mac address='${x(node.mac ?? '')}'/>
      <source network='${x(networkName(id))}'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'>
      <target port='0'/>
    </serial>
    <console type='pty'>
      <target type='serial' port='0'/>
    </console>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'>
      <listen type='address' address='127.0.0.1'/>
    </graphics>
    <rng model='virtio'>
      <backend model='random'>/dev/urandom</backend>
    </rng>
  </devices>
</domain>
`;
}

/** The drive of a Windows guest's unattend media, which the eject task empties (tasks/windows-guest.ts). */
export const MEDIA_TARGET = 'sdb';

/**
 * A Linux guest's NoCloud seed: a read-only virtio disk, not a SATA CD-ROM.
 * Debian's genericcloud images boot linux-image-cloud-amd64, built without
 * SATA_AHCI (q35's SATA controller), so a CD-ROM there is never seen and
 * cloud-init finds no seed; cloud-init's NoCloud looks for the `cidata`
 * label on every block device, virtio ones included.
 */
function seedDisk(source: string): string {
  return `    <disk type='volume' device='disk'>
      <driver name='qemu' type='raw'/>
      ${source}
      <target dev='vdb' bus='virtio'/>
      <readonly/>
    </disk>
`;
}

function cdrom(source: string, dev: string, type: 'file' | 'volume' = 'file', boot?: number): string {
  return `    <disk type='${x(type)}' device='cdrom'>
      <driver name='qemu' type='raw'/>
      ${source}
      <target dev='${x(dev)}' bus='sata'/>
      <readonly/>
${boot === undefined ? '' : `      <boot order='${x(String(boot))}'/>\n`}    </disk>
`;
}

/** The KVM test guest: no disk, its firmware's banner on QEMU's debug console (I/O port 0x402, where SeaBIOS logs). */
export const KVM_PROBE = { file: 'kvm-probe.xml' } as const;

export function kvmProbe(model: Pick<DriverModel, 'cluster'>): { domain: string; log: string } {
  const id = clusterIdentity(model.cluster);
  // qemu runs as libvirt's qemu user, which owns this directory on Debian and Fedora alike.
  return { domain: `kubemix-kvm-probe-${id}`, log: `/var/lib/libvirt/qemu/kubemix-kvm-probe-${id}.log` };
}

export function kvmProbeXml(model: Pick<DriverModel, 'cluster'>): string {
  const probe = kvmProbe(model);
  return `<domain type='kvm' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>${x(probe.domain)}</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
  </os>
  <devices>
    <graphics type='vnc' autoport='yes' listen='127.0.0.1'>
      <listen type='address' address='127.0.0.1'/>
    </graphics>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-chardev'/>
    <qemu:arg value='file,id=kubemixprobe,path=${x(probe.log)}'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='isa-debugcon,iobase=0x402,chardev=kubemixprobe'/>
  </qemu:commandline>
</domain>
`;
}
