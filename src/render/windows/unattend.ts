// Autounattend.xml for a Windows Server 2022/2025 VM the libvirt driver
// installs from ISO: virtio drivers, UEFI disk layout, Datacenter image,
// computer name, UTC, the local Administrator password (a secret reference)
// and the network. The rest of the first boot (OpenSSH, host key, keys,
// firewall, shutdown) is kubemix-setup.ps1, which Setup runs through
// SetupComplete.cmd. Pure: the driver writes these files onto the install media.
import { INSTALL_MEDIA_FILES } from '../../drivers/install-media.js';
import { windowsRelease } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { parseCidr } from '../../net/cidr.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import type { PlanNode } from '../../model/types.js';
import { WINDOWS_NAME_LIMIT } from '../../spec/rules/nodes.js';
import { servicesFacts } from '../services/facts.js';
import { oncePer } from '../../util/memo.js';
import { el, renderXml, sharedElement, type XmlElement } from './xml.js';

/** The files of the node's unattend media, by their path on the media's root. */
export const UNATTEND_MEDIA = INSTALL_MEDIA_FILES;

export interface UnattendOptions {
  /** Letters the virtio-win media may get in Windows PE (not fixed); a driver that knows the letter passes only it. */
  readonly virtioDriveLetters: readonly string[];
  /** Datacenter as Server Core (default) or with the Desktop Experience. */
  readonly edition: 'core' | 'desktop';
}

export const DEFAULT_UNATTEND_OPTIONS: UnattendOptions = { virtioDriveLetters: ['D', 'E', 'F', 'G'], edition: 'core' };

export type UnattendNetwork =
  | { readonly kind: 'dhcp' }
  | {
      readonly kind: 'static';
      readonly mac: string;
      readonly address: string;
      readonly gateway: string;
      readonly dns: string;
      readonly domain: string;
    };

/**
 * DHCP when the spec asks for it: a reservation by MAC hands out the planned
 * address (libvirt's network for the VMs it creates, like the Linux guests'
 * seeds; the services node for existing hosts). The planned address otherwise.
 */
export function unattendNetwork(model: ClusterModel, node: PlanNode): UnattendNetwork {
  const facts = servicesFacts(model);
  if (model.services?.dhcp === true) return { kind: 'dhcp' };
  if (node.mac === undefined)
    throw new Error(`${node.name}: an unattended install needs the VM's MAC (libvirt driver)`);
  const prefix = parseCidr(model.cluster.network.nodeCidr)?.prefix;
  if (prefix === undefined) throw new Error(`node network ${model.cluster.network.nodeCidr} is not a CIDR`);
  const gateway = model.cluster.network.gateway;
  return {
    kind: 'static',
    // Windows names an interface by its MAC in `AA-BB-CC-DD-EE-FF` form.
    mac: node.mac.toUpperCase().replace(/:/g, '-'),
    address: `${node.ip}/${prefix}`,
    gateway,
    dns: facts?.toggles.dns === true ? facts.node.ip : gateway,
    domain: `${model.cluster.name}.${model.cluster.domain}`,
  };
}

const COMPONENT_ATTRS = (name: string): [string, string][] => [
  ['name', name],
  ['processorArchitecture', 'amd64'],
  ['publicKeyToken', '31bf3856ad364e35'],
  ['language', 'neutral'],
  ['versionScope', 'nonSxS'],
];
const component = (name: string, body: readonly XmlElement[]): XmlElement =>
  el('component', body, COMPONENT_ATTRS(name));
const add = (tag: string, body: string | readonly XmlElement[], keyValue?: string): XmlElement =>
  el(
    tag,
    body,
    keyValue === undefined
      ? [['wcm:action', 'add']]
      : [
          ['wcm:action', 'add'],
          ['wcm:keyValue', keyValue],
        ],
  );
const pass = (name: string, components: readonly XmlElement[]): XmlElement =>
  el('settings', components, [['pass', name]]);

/** A valid NetBIOS computer name: ≤ 15 characters, letters, digits and hyphens, not all digits. */
export function computerName(node: PlanNode): string {
  if (node.name.length > WINDOWS_NAME_LIMIT || !/^[A-Za-z0-9-]+$/.test(node.name) || /^[0-9]+$/.test(node.name)) {
    throw new Error(
      `${node.name} is not a valid Windows computer name (≤ ${WINDOWS_NAME_LIMIT} letters, digits, hyphens)`,
    );
  }
  return node.name;
}

export function renderUnattend(
  model: ClusterModel,
  node: PlanNode,
  options: UnattendOptions = DEFAULT_UNATTEND_OPTIONS,
): string {
  const release = windowsRelease(node.os);
  if (release === undefined)
    throw new Error(`${node.name}: ${node.os} is not a Windows Server release kubemix installs`);
  // What no node's name or address is in: built once per model, release and options, written once (xml.ts).
  const same = oncePer(model, `unattend:${node.os}:${JSON.stringify(options)}`, () => ({
    windowsPE: sharedElement(
      pass('windowsPE', [
        drivers('Microsoft-Windows-PnpCustomizationsWinPE', release.virtioDir, options),
        internationalPE(),
        setup(release.images[options.edition]),
      ]),
    ),
    offlineServicing: sharedElement(
      pass('offlineServicing', [drivers('Microsoft-Windows-PnpCustomizationsNonWinPE', release.virtioDir, options)]),
    ),
    copyScripts: sharedElement(copyScripts()),
    serverManager: sharedElement(serverManager()),
    oobeSystem: sharedElement(pass('oobeSystem', [international('Microsoft-Windows-International-Core'), oobeShell()])),
  }));
  const root = el(
    'unattend',
    [
      same.windowsPE,
      same.offlineServicing,
      pass('specialize', [
        specializeShell(node),
        same.copyScripts,
        same.serverManager,
        ...networkComponents(unattendNetwork(model, node)),
      ]),
      same.oobeSystem,
    ],
    [
      ['xmlns', 'urn:schemas-microsoft-com:unattend'],
      ['xmlns:wcm', 'http://schemas.microsoft.com/WMIConfig/2002/State'],
    ],
  );
  return renderXml(root);
}

// viostor (virtio-blk) and vioscsi (virtio-scsi) so Setup sees the disk; NetKVM for the NIC.
const VIRTIO_DRIVERS = ['viostor', 'vioscsi', 'NetKVM'] as const;

function drivers(name: string, dir: string, options: UnattendOptions): XmlElement {
  const paths = options.virtioDriveLetters.flatMap((letter) =>
    VIRTIO_DRIVERS.map((d) => `${letter}:\\${d}\\${dir}\\amd64`),
  );
  return component(name, [
    el(
      'DriverPaths',
      paths.map((p, i) => add('PathAndCredentials', [el('Path', p)], String(i + 1))),
    ),
  ]);
}

const LOCALE = [
  el('InputLocale', 'en-US'),
  el('SystemLocale', 'en-US'),
  el('UILanguage', 'en-US'),
  el('UserLocale', 'en-US'),
];

function internationalPE(): XmlElement {
  return component('Microsoft-Windows-International-Core-WinPE', [
    el('SetupUILanguage', [el('UILanguage', 'en-US')]),
    ...LOCALE,
  ]);
}

function international(name: string): XmlElement {
  return component(name, LOCALE);
}

/** UEFI layout on disk 0: EFI (FAT32), MSR, Windows on the rest. */
function setup(imageName: string): XmlElement {
  const partition = (order: number, type: string, size?: number): XmlElement =>
    add('CreatePartition', [
      el('Order', String(order)),
      el('Type', type),
      ...(size === undefined ? [el('Extend', 'true')] : [el('Size', String(size))]),
    ]);
  const modify = (order: number, extra: readonly XmlElement[]): XmlElement =>
    add('ModifyPartition', [el('Order', String(order)), el('PartitionID', String(order)), ...extra]);
  const disk = add('Disk', [
    el('DiskID', '0'),
    el('WillWipeDisk', 'true'),
    el('CreatePartitions', [partition(1, 'EFI', 100), partition(2, 'MSR', 16), partition(3, 'Primary')]),
    el('ModifyPartitions', [
      modify(1, [el('Format', 'FAT32'), el('Label', 'System')]),
      modify(2, []),
      modify(3, [el('Format', 'NTFS'), el('Label', 'Windows'), el('Letter', 'C')]),
    ]),
  ]);
  const image = el('OSImage', [
    el('InstallFrom', [add('MetaData', [el('Key', '/IMAGE/NAME'), el('Value', imageName)])]),
    el('InstallTo', [el('DiskID', '0'), el('PartitionID', '3')]),
  ]);
  return component('Microsoft-Windows-Setup', [
    el('DiskConfiguration', [disk]),
    el('ImageInstall', [image]),
    el('UserData', [el('AcceptEula', 'true'), el('FullName', 'kubemix'), el('Organization', 'kubemix')]),
    // No updates fetched mid-install: the same media always installs the same bits.
    el('DynamicUpdate', [el('Enable', 'false'), el('WillShowUI', 'Never')]),
  ]);
}

function specializeShell(node: PlanNode): XmlElement {
  return component('Microsoft-Windows-Shell-Setup', [el('ComputerName', computerName(node)), el('TimeZone', 'UTC')]);
}

// Letters the media can have once Windows runs (A: for a floppy image).
const MEDIA_LETTERS = 'A D E F G H I J K L M N O P Q R S T U V W X Y Z';

/** Copies kubemix-setup.ps1 and SetupComplete.cmd from the media to where Setup runs SetupComplete.cmd. */
function copyScripts(): XmlElement {
  const scripts = '%WINDIR%\\Setup\\Scripts';
  const commands = [
    ['create the SetupComplete folder', `cmd.exe /c if not exist ${scripts} mkdir ${scripts}`],
    [
      'copy kubemix-setup.ps1 and SetupComplete.cmd from the unattend media',
      `cmd.exe /c for %d in (${MEDIA_LETTERS}) do @if exist %d:\\kubemix\\kubemix-setup.ps1 copy /y %d:\\kubemix\\* ${scripts}\\`,
    ],
  ] as const;
  return component('Microsoft-Windows-Deployment', [
    el(
      'RunSynchronous',
      commands.map(([what, path], i) =>
        add('RunSynchronousCommand', [el('Order', String(i + 1)), el('Description', what), el('Path', path)]),
      ),
    ),
  ]);
}

function serverManager(): XmlElement {
  return component('Microsoft-Windows-ServerManager-SvrMgrNc', [el('DoNotOpenServerManagerAtLogon', 'true')]);
}

function networkComponents(net: UnattendNetwork): XmlElement[] {
  if (net.kind === 'dhcp') return [];
  const tcpip = component('Microsoft-Windows-TCPIP', [
    el('Interfaces', [
      add('Interface', [
        el('Identifier', net.mac),
        el('Ipv4Settings', [el('DhcpEnabled', 'false')]),
        el('UnicastIpAddresses', [add('IpAddress', net.address, '1')]),
        el('Routes', [
          add('Route', [el('Identifier', '0'), el('Prefix', '0.0.0.0/0'), el('NextHopAddress', net.gateway)]),
        ]),
      ]),
    ]),
  ]);
  const dns = component('Microsoft-Windows-DNS-Client', [
    el('Interfaces', [
      add('Interface', [
        el('Identifier', net.mac),
        el('DNSServerSearchOrder', [add('IpAddress', net.dns, '1')]),
        el('DNSDomain', net.domain),
      ]),
    ]),
  ]);
  return [tcpip, dns];
}

function oobeShell(): XmlElement {
  // PlainText: the executor fills the reference; Setup masks the value in the copy it caches.
  const password = el('AdministratorPassword', [
    el('Value', `{{secret:${SECRET_NAMES.windowsAdminPassword}}}`),
    el('PlainText', 'true'),
  ]);
  return component('Microsoft-Windows-Shell-Setup', [
    el('UserAccounts', [password]),
    el('OOBE', [el('HideEULAPage', 'true'), el('ProtectYourPC', '3')]),
    el('TimeZone', 'UTC'),
  ]);
}
