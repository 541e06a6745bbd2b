// Node rules: roles, operating systems, names.
import { driverTraits } from '../../drivers/traits.js';
import { LINUX_DISTROS, WINDOWS, linuxDistro, windowsRelease } from '../../matrix/index.js';
import type { Diagnostic } from '../../errors.js';
import { didYouMean } from '../suggest.js';
import { error, warning, type Rule } from './context.js';

/** NetBIOS computer names are at most 15 characters. */
export const WINDOWS_NAME_LIMIT = 15;

const KNOWN_OS = [...LINUX_DISTROS.map((d) => d.id), ...WINDOWS.map((w) => w.os)];

export const controlPlaneCount: Rule = (ctx) => {
  const count = ctx.nodes.filter((n) => n.role === 'control-plane').length;
  const path = driverTraits(ctx.spec.driver).controlPlanePath;
  if (count === 0) return [error('nodes.no-control-plane', path, 'the cluster needs at least one control-plane node')];
  if (count % 2 === 0) {
    return [
      warning(
        'nodes.even-control-plane',
        path,
        `${count} control-plane nodes: etcd tolerates no more failures than with ${count - 1}`,
        'use an odd count (1, 3 or 5)',
      ),
    ];
  }
  return [];
};

export const knownOperatingSystems: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const node of ctx.nodes) {
    const key = `${node.path}|${node.os}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const path = osPath(node.path, node.role);
    if (linuxDistro(node.os) !== undefined || windowsRelease(node.os) !== undefined) continue;
    if (/^windows-(2016|2019)$/.test(node.os)) {
      out.push(error('os.unsupported', path, `${node.os} is not supported`, 'use windows-2022 or windows-2025'));
      continue;
    }
    const guess = didYouMean(node.os, KNOWN_OS);
    out.push(
      error(
        'os.unknown',
        path,
        `unknown operating system "${node.os}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
        `supported: ${KNOWN_OS.join(', ')}`,
      ),
    );
  }
  return out;
};

function osPath(nodePath: string, role: string): string {
  if (nodePath.startsWith('spec.infrastructure.hosts')) return `${nodePath}.os`;
  if (role === 'control-plane') return 'spec.nodes.controlPlane.distro';
  if (role === 'services') return 'spec.services.distro';
  return `${nodePath}.os`;
}

export const windowsOnlyAsWorkers: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const reported = new Set<string>();
  for (const node of ctx.nodes) {
    if (!node.os.startsWith('windows') || (node.role === 'worker' && !node.alsoWorker) || reported.has(node.path))
      continue;
    reported.add(node.path);
    const what = node.role === 'services' ? 'the services node' : 'the control plane';
    out.push(
      error(
        'nodes.windows-role',
        osPath(node.path, node.role),
        `Windows Server can only run workers, not ${what}`,
        'use a Linux distribution here',
      ),
    );
  }
  return out;
};

export const windowsNameLength: Rule = (ctx) =>
  ctx.nodes
    .filter((n) => n.os.startsWith('windows') && n.name.length > WINDOWS_NAME_LIMIT)
    .map((n) =>
      error(
        'nodes.windows-name-too-long',
        n.path,
        `Windows node name "${n.name}" is ${n.name.length} characters; Windows computer names are at most ${WINDOWS_NAME_LIMIT}`,
        'use a shorter name (or group name prefix)',
      ),
    );

export const uniqueNames: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const seen = new Map<string, string>();
  for (const node of ctx.nodes) {
    const earlier = seen.get(node.name);
    if (earlier !== undefined)
      out.push(
        error(
          'nodes.duplicate-name',
          node.path,
          `node name "${node.name}" is also used by ${earlier}`,
          'give every node (or worker group) a distinct name',
        ),
      );
    else seen.set(node.name, node.path);
  }
  const hv = new Set<string>();
  ctx.spec.hypervisors.forEach((h, i) => {
    if (hv.has(h.name))
      out.push(
        error(
          'hypervisors.duplicate-name',
          `spec.infrastructure.hypervisors[${i}].name`,
          `hypervisor name "${h.name}" is used twice`,
        ),
      );
    hv.add(h.name);
  });
  return out;
};

export const untaintedControlPlane: Rule = (ctx) => {
  const linuxWorkers = ctx.nodes.some((n) => (n.role === 'worker' && !n.os.startsWith('windows')) || n.alsoWorker);
  if (linuxWorkers || !ctx.nodes.some((n) => n.role === 'control-plane')) return [];
  return [
    warning(
      'nodes.control-plane-untainted',
      'spec.nodes',
      'there is no Linux worker: the control plane will be left untainted so cluster add-ons (CoreDNS, flannel) can run there',
    ),
  ];
};

export const existingHostRoles: Rule = (ctx) => {
  if (driverTraits(ctx.spec.driver).createsMachines) return [];
  const out: Diagnostic[] = [];
  if (ctx.parsed.spec.nodes !== undefined) {
    out.push(
      error(
        'nodes.with-existing',
        'spec.nodes',
        'node groups are for the libvirt driver; with driver "existing" every node is listed under infrastructure.hosts',
        'move the nodes to infrastructure.hosts',
      ),
    );
  }
  ctx.spec.hosts.forEach((h, i) => {
    if (h.roles.includes('services') && h.roles.length > 1) {
      out.push(
        error(
          'nodes.roles',
          `spec.infrastructure.hosts[${i}].roles`,
          'the services node cannot also be a Kubernetes node',
          'give it only the "services" role',
        ),
      );
    }
  });
  const services = ctx.spec.hosts.filter((h) => h.roles.includes('services'));
  if (services.length > 1)
    out.push(
      error(
        'nodes.services-count',
        'spec.infrastructure.hosts',
        `${services.length} hosts have the services role; at most one may`,
      ),
    );
  if (services.length === 0 && ctx.parsed.spec.services.enabled && ctx.spec.services.enabled) {
    out.push(
      warning(
        'services.no-host',
        'spec.services.enabled',
        'no host has the "services" role, so there is no services node (DNS, load balancer, registry)',
        'add a host with roles: [services], or set services.enabled: false',
      ),
    );
  }
  if (ctx.spec.services.dhcp && services.length > 0 && !ctx.spec.hosts.some((h) => h.mac !== undefined)) {
    out.push(
      warning(
        'services.dhcp-existing',
        'spec.services.dhcp',
        'no host has a "mac", so there is nothing to reserve: DHCP is not deployed',
        'give the hosts that boot by DHCP their "mac", or set services.dhcp: false',
      ),
    );
  }
  return out;
};

/** The services node installs HAProxy, Bind, dnsmasq and the registry from Debian/Ubuntu packages. */
export const servicesNodeDistro: Rule = (ctx) => {
  const services = ctx.nodes.find((n) => n.role === 'services');
  const distro = services === undefined ? undefined : linuxDistro(services.os);
  if (services === undefined || distro === undefined || distro.family === 'apt') return [];
  const why = `the services node runs on Debian or Ubuntu (its packages come from apt); ${services.os} is not supported there yet`;
  return [
    error(
      'services.distro-unsupported',
      osPath(services.path, 'services'),
      why,
      'use debian-12, debian-13 or ubuntu-24.04 for the services node',
    ),
  ];
};
