// inventoryToSpec: an Ansible inventory → an `existing`-driver spec document.
// Whatever the inventory does not say is filled with a default, and every
// default is reported as a warning naming the inventory line it stands for.
import { InvalidSpecError, type Diagnostic } from '../../errors.js';
import { DEFAULT_LINUX_DISTRO } from '../../matrix/index.js';
import { parseIp } from '../../net/cidr.js';
import { SPEC_API_VERSION } from '../../spec/checks.js';
import { bastionFromSshArgs, type Bastion } from './bastion.js';
import type { SetVar } from './host-vars.js';
import { coveringCidr } from './node-network.js';
import { classifyHosts, CONTROL_PLANE_GROUPS, groupLine, type ClassifiedHost } from './roles.js';
import type { Inventory } from './types.js';

export const IMPORT_WINDOWS_OS = 'windows-2022';

export interface ImportResult {
  readonly document: Record<string, unknown>;
  readonly warnings: Diagnostic[];
  /** The inventory line each generated spec field (and host entry) comes from, for import-locations.ts. */
  readonly origins: ReadonlyMap<string, Origin>;
}

export interface Origin {
  readonly line: number;
  /** The inventory host a `spec.infrastructure.hosts[i]` entry stands for. */
  readonly host?: string;
}

interface Ctx {
  readonly inv: Inventory;
  readonly warnings: Diagnostic[];
  readonly errors: Diagnostic[];
  readonly origins: Map<string, Origin>;
}

export function inventoryToSpec(inv: Inventory, clusterName: string): ImportResult {
  const ctx: Ctx = { inv, warnings: [], errors: [], origins: new Map() };
  const nodes = classifyHosts(inv).filter((h) => keep(ctx, h));
  const hosts = nodes.map((h, i) => hostEntry(ctx, h, i));
  checkControlPlane(ctx, nodes);
  const network = nodeNetwork(ctx, hosts, nodes);
  if (ctx.errors.length > 0) throw new InvalidSpecError(inv.file, [...ctx.errors, ...ctx.warnings]);
  warn(
    ctx,
    'inventory.default-services',
    'spec.services.enabled',
    nodes[0]?.line ?? 1,
    'no services node (HAProxy, Bind, DHCP, registry): services off; the API endpoint is the first control-plane node',
  );
  warn(
    ctx,
    'inventory.default-name',
    'metadata.name',
    1,
    `cluster name ${clusterName} taken from the inventory file name`,
  );
  const document = {
    apiVersion: SPEC_API_VERSION,
    kind: 'Cluster',
    metadata: { name: clusterName },
    spec: { network, infrastructure: { driver: 'existing', hosts }, services: { enabled: false } },
  };
  return { document, warnings: ctx.warnings, origins: ctx.origins };
}

function warn(ctx: Ctx, code: string, path: string, line: number, message: string): void {
  ctx.warnings.push({ code, severity: 'warning', path, message, location: `${ctx.inv.file}:${line}` });
}

function fail(ctx: Ctx, code: string, path: string, line: number, message: string, hint?: string): void {
  ctx.errors.push({
    code,
    severity: 'error',
    path,
    message,
    location: `${ctx.inv.file}:${line}`,
    ...(hint === undefined ? {} : { hint }),
  });
}

/** Cluster nodes are the hosts with a Kubernetes role; the others are reported and left out. */
function keep(ctx: Ctx, h: ClassifiedHost): boolean {
  if (h.controlPlane || h.worker) {
    if (h.etcd && !h.controlPlane)
      warn(
        ctx,
        'inventory.etcd-on-worker',
        h.name,
        h.line,
        `${h.name} is in etcd but not in the control plane: kubemix runs etcd stacked on control-plane nodes only`,
      );
    if (h.windows && h.controlPlane)
      fail(
        ctx,
        'inventory.windows-control-plane',
        h.name,
        h.line,
        `${h.name} is a Windows host in a control-plane group`,
        'Windows nodes can only be workers',
      );
    return true;
  }
  if (h.etcd)
    warn(
      ctx,
      'inventory.etcd-only',
      h.name,
      h.line,
      `${h.name} is an etcd-only host: external etcd is not supported yet, the host is left out`,
    );
  else if (h.inCluster)
    warn(
      ctx,
      'inventory.no-role',
      h.name,
      h.line,
      `${h.name} is in the cluster group but in no control-plane or node group: left out`,
    );
  return false;
}

function value(h: ClassifiedHost, ...keys: string[]): SetVar | undefined {
  for (const k of keys) {
    const v = h.vars.get(k);
    if (v !== undefined && v.value !== null && v.value !== '') return v;
  }
  return undefined;
}

function hostEntry(ctx: Ctx, h: ClassifiedHost, i: number): Record<string, unknown> {
  const at = `spec.infrastructure.hosts[${i}]`;
  ctx.origins.set(at, { line: h.line, host: h.name });
  const name = nodeName(ctx, h, at);
  const { address, ip } = addresses(ctx, h, at);
  const roles = [...(h.controlPlane ? ['control-plane'] : []), ...(h.worker ? ['worker'] : [])];
  const os = h.windows ? IMPORT_WINDOWS_OS : DEFAULT_LINUX_DISTRO;
  if (h.windows)
    warn(
      ctx,
      'inventory.default-os',
      `${at}.os`,
      h.line,
      `${h.name}: Windows Server version not in the inventory, assuming ${os}; gather-facts checks it`,
    );
  else
    warn(
      ctx,
      'inventory.default-os',
      `${at}.os`,
      h.line,
      `${h.name}: Linux distribution not in the inventory, assuming ${os}; gather-facts (task-run-validations/${name}/os-and-size) checks it`,
    );
  const identity = value(h, 'ansible_ssh_private_key_file', 'ansible_private_key_file');
  if (identity !== undefined) ctx.origins.set(`${at}.identityFile`, { line: identity.line });
  const bastion = bastionOf(ctx, h, at);
  return {
    name,
    address,
    ...(ip === address ? {} : { ip }),
    roles,
    os,
    user: sshUser(ctx, h, at),
    port: sshPort(ctx, h, at),
    ...(identity === undefined ? {} : { identityFile: String(identity.value) }),
    ...(bastion === undefined ? {} : { bastion }),
  };
}

/** The SSH address (ansible_host, else the host name) and the node IP (ip, else the address). */
function addresses(ctx: Ctx, h: ClassifiedHost, at: string): { address: string; ip: string } {
  const host = value(h, 'ansible_host', 'ansible_ssh_host');
  const given = value(h, 'ip');
  const address = String(host?.value ?? h.name);
  const ip = String(given?.value ?? address);
  if (host !== undefined) ctx.origins.set(`${at}.address`, { line: host.line });
  ctx.origins.set(`${at}.ip`, { line: (given ?? host)?.line ?? h.line });
  if (host !== undefined && parseIp(address) === undefined && !HOST_NAME.test(address)) {
    const message = `${h.name}: ansible_host ${address} is neither an IP address nor a host name`;
    fail(
      ctx,
      'inventory.address',
      `${at}.address`,
      host.line,
      message,
      'set ansible_host=<IP address or DNS name> on the host line',
    );
  } else if (given !== undefined && parseIp(ip)?.family !== 4) {
    fail(
      ctx,
      'inventory.ip',
      `${at}.ip`,
      given.line,
      `${h.name}: ip ${ip} is not an IPv4 address`,
      'set ip=<IPv4 node address>',
    );
  } else if (parseIp(ip)?.family !== 4) {
    fail(
      ctx,
      'inventory.no-ip',
      `${at}.ip`,
      h.line,
      `${h.name} has no IPv4 node address (ip or ansible_host)`,
      'set ip=<node address> on the host line',
    );
  }
  return { address, ip };
}

/** A DNS name (RFC 1123 labels, dot-separated), as ssh resolves it. */
const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*\.?$/;

function nodeName(ctx: Ctx, h: ClassifiedHost, at: string): string {
  const given = value(h, 'kubernetes_node_hostname');
  ctx.origins.set(`${at}.name`, { line: given?.line ?? h.line });
  const raw = String(given?.value ?? h.name);
  const label = raw.toLowerCase().split('.')[0] ?? '';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(label) || label.length > 63) {
    fail(
      ctx,
      'inventory.node-name',
      `${at}.name`,
      given?.line ?? h.line,
      `${raw} cannot be a node name (a DNS label)`,
      'set kubernetes_node_hostname=<name> on the host line',
    );
  } else if (label !== raw) {
    warn(
      ctx,
      'inventory.node-name',
      `${at}.name`,
      given?.line ?? h.line,
      `node name ${label} from ${raw} (a node name is one lower-case DNS label)`,
    );
  }
  return label;
}

function sshUser(ctx: Ctx, h: ClassifiedHost, at: string): string {
  const given = value(h, 'ansible_user', 'ansible_ssh_user');
  ctx.origins.set(`${at}.user`, { line: given?.line ?? h.line });
  if (given !== undefined) return String(given.value);
  const user = h.windows ? 'Administrator' : 'root';
  warn(ctx, 'inventory.default-user', `${at}.user`, h.line, `${h.name}: no ansible_user, using ${user}`);
  return user;
}

function sshPort(ctx: Ctx, h: ClassifiedHost, at: string): number {
  const given = value(h, 'ansible_port', 'ansible_ssh_port');
  const connection = String(h.vars.get('ansible_connection')?.value ?? 'ssh');
  ctx.origins.set(`${at}.port`, { line: given?.line ?? h.line });
  if (given !== undefined && connection !== 'winrm' && connection !== 'psrp') {
    const port = Number(given.value);
    if (Number.isInteger(port) && port >= 1 && port <= 65535) return port;
    fail(
      ctx,
      'inventory.port',
      `${at}.port`,
      given.line,
      `${h.name}: ansible_port ${String(given.value)} is not a port`,
    );
    return 22;
  }
  const why =
    given === undefined
      ? 'no ansible_port'
      : `ansible_port ${String(given.value)} is for ${connection}; kubemix reaches Windows over OpenSSH`;
  warn(ctx, 'inventory.default-port', `${at}.port`, given?.line ?? h.line, `${h.name}: ${why}, using port 22`);
  return 22;
}

function bastionOf(ctx: Ctx, h: ClassifiedHost, at: string): Bastion | undefined {
  const args = value(h, 'ansible_ssh_common_args', 'ansible_ssh_extra_args');
  ctx.origins.set(`${at}.bastion`, { line: args?.line ?? ctx.inv.hosts.get('bastion')?.line ?? h.line });
  if (args === undefined) return jumpHostOf(ctx, h, at);
  try {
    return bastionFromSshArgs(String(args.value));
  } catch (error) {
    fail(
      ctx,
      'inventory.ssh-args',
      `${at}.bastion`,
      args.line,
      `${h.name}: cannot split ansible_ssh_common_args: ${(error as Error).message}`,
    );
    return undefined;
  }
}

/** kubespray's convention: a host named `bastion` is the jump host of every node. */
function jumpHostOf(ctx: Ctx, h: ClassifiedHost, at: string): Bastion | undefined {
  const b = ctx.inv.hosts.get('bastion');
  if (b === undefined || h.name === 'bastion') return undefined;
  warn(
    ctx,
    'inventory.bastion',
    `${at}.bastion`,
    b.line,
    `${h.name}: reached through the inventory's bastion host (kubespray convention)`,
  );
  const address = String(b.vars.get('ansible_host') ?? 'bastion');
  const user = b.vars.get('ansible_user');
  const port = b.vars.get('ansible_port');
  return {
    address,
    ...(user === undefined ? {} : { user: String(user) }),
    ...(port === undefined ? {} : { port: Number(port) }),
  };
}

function checkControlPlane(ctx: Ctx, nodes: readonly ClassifiedHost[]): void {
  const count = nodes.filter((h) => h.controlPlane).length;
  const line = groupLine(ctx.inv, CONTROL_PLANE_GROUPS);
  ctx.origins.set('spec.infrastructure.hosts', { line });
  if (count === 0)
    fail(
      ctx,
      'inventory.no-control-plane',
      'spec.infrastructure.hosts',
      line,
      'no host in kube_control_plane / kube-master',
      'list the control-plane hosts in [kube_control_plane]',
    );
  else if (count % 2 === 0)
    warn(
      ctx,
      'inventory.even-control-plane',
      'spec.infrastructure.hosts',
      line,
      `${count} control-plane hosts: etcd keeps quorum no better than with ${count - 1}; use an odd number`,
    );
}

function nodeNetwork(
  ctx: Ctx,
  hosts: readonly Record<string, unknown>[],
  nodes: readonly ClassifiedHost[],
): Record<string, string> {
  const ips = hosts.map((h) => String(h['ip'] ?? h['address']));
  const line = nodes[0]?.line ?? 1;
  ctx.origins.set('spec.network', { line });
  const cidr = coveringCidr(ips);
  if (cidr === undefined) {
    if (ctx.errors.length === 0 && ips.length > 0)
      fail(
        ctx,
        'inventory.node-network',
        'spec.network.nodeCidr',
        line,
        `no IPv4 network of /8 or smaller holds every node address (${ips.join(', ')})`,
      );
    return {};
  }
  warn(
    ctx,
    'inventory.default-network',
    'spec.network.nodeCidr',
    line,
    `node network ${cidr}: the smallest network holding every node address; set spec.network.nodeCidr and gateway to the real ones`,
  );
  return { nodeCidr: cidr };
}
