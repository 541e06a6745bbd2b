// Address plan rules: valid, non-overlapping CIDRs with room for every node.
import { driverTraits } from '../../drivers/traits.js';
import { WINDOWS_EXTERNAL_HNS_CIDR } from '../../matrix/index.js';
import {
  contains,
  formatCidr,
  hasHostBits,
  lastAddress,
  overlaps,
  parseCidr,
  parseIp,
  subnetCount,
  usableHosts,
  type Cidr,
} from '../../net/cidr.js';
import type { Diagnostic } from '../../errors.js';
import { error, hasWindows, warning, type Rule, type RuleContext } from './context.js';

/** Pod CIDR size the controller-manager hands each node (IPv4 default). */
export const NODE_POD_PREFIX = 24;

interface NamedCidr {
  readonly field: string;
  readonly path: string;
  readonly cidr: Cidr;
}

function cidrList(text: string, path: string, field: string, out: Diagnostic[]): NamedCidr[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > 2)
    out.push(error('cidr.invalid', path, `at most two CIDRs (IPv4 and IPv6) may be given, got ${parts.length}`));
  const cidrs = parts.flatMap((part) => {
    const cidr = parseCidr(part);
    if (cidr !== undefined) return [{ field, path, cidr }];
    const hint = hasHostBits(part)
      ? `host bits are set; did you mean ${networkOf(part)}?`
      : 'write it as address/prefix, e.g. 10.244.0.0/16';
    out.push(error('cidr.invalid', path, `"${part}" is not a valid CIDR`, hint));
    return [];
  });
  // kubeadm: "expected one (IPv4 or IPv6) CIDR or two CIDRs from each family for dual-stack networking"
  // (cmd/kubeadm/app/apis/kubeadm/validation ValidateIPNetFromString).
  const [a, b] = cidrs;
  if (a !== undefined && b !== undefined && a.cidr.family === b.cidr.family)
    out.push(
      error(
        'cidr.family',
        path,
        `the ${field} ${formatCidr(a.cidr)},${formatCidr(b.cidr)} is two IPv${a.cidr.family} CIDRs: a second CIDR is for dual-stack, one IPv4 and one IPv6`,
        'give one CIDR, or one of each family',
      ),
    );
  return cidrs;
}

function networkOf(text: string): string {
  const [ip, prefix] = text.split('/');
  const parsed = parseIp(ip ?? '');
  if (parsed === undefined) return text;
  const bits = parsed.family === 4 ? 32 : 128;
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - Number(prefix))) - 1n);
  return formatCidr({ family: parsed.family, base: parsed.value & mask, prefix: Number(prefix) });
}

export function networkCidrs(ctx: RuleContext, out: Diagnostic[]): NamedCidr[] {
  const n = ctx.spec.network;
  return [
    ...cidrList(n.nodeCidr, 'spec.network.nodeCidr', 'node network', out),
    ...cidrList(n.podCidr, 'spec.network.podCidr', 'pod network', out),
    ...cidrList(n.serviceCidr, 'spec.network.serviceCidr', 'service network', out),
  ];
}

export const cidrsValidAndDisjoint: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const cidrs = networkCidrs(ctx, out);
  for (let i = 0; i < cidrs.length; i += 1) {
    for (let j = i + 1; j < cidrs.length; j += 1) {
      const a = cidrs[i];
      const b = cidrs[j];
      if (a === undefined || b === undefined || !overlaps(a.cidr, b.cidr)) continue;
      out.push(
        error(
          'cidr.overlap',
          b.path,
          `the ${b.field} ${formatCidr(b.cidr)} overlaps the ${a.field} ${formatCidr(a.cidr)}`,
          'choose ranges that do not overlap',
        ),
      );
    }
  }
  const hns = parseCidr(WINDOWS_EXTERNAL_HNS_CIDR);
  for (const c of cidrs) {
    if (hns === undefined || !overlaps(c.cidr, hns)) continue;
    const message = `the ${c.field} ${formatCidr(c.cidr)} overlaps ${WINDOWS_EXTERNAL_HNS_CIDR}, the "External" HNS network every Windows node gets`;
    out.push(
      hasWindows(ctx)
        ? error('cidr.hns-overlap', c.path, message, 'choose another range')
        : warning('cidr.hns-overlap', c.path, `${message}: Windows nodes could not join later`),
    );
  }
  const nodes = cidrs.filter((c) => c.path === 'spec.network.nodeCidr');
  const node = nodes[0];
  if (nodes.length > 1)
    out.push(
      error(
        'cidr.family',
        'spec.network.nodeCidr',
        'the node network is one IPv4 CIDR',
        'dual-stack is for podCidr and serviceCidr',
      ),
    );
  else if (node !== undefined && node.cidr.family !== 4)
    out.push(error('cidr.family', node.path, 'the node network must be IPv4'));
  return out;
};

/**
 * Address ranges no node, pod or Service address can come from: the kubelet refuses a loopback, multicast,
 * link-local or all-zeros node IP (pkg/kubelet/kubelet_node_status.go validateNodeIP), a loopback pod or
 * Service address is answered by the pod's own `lo`, and 240.0.0.0/4 (with the broadcast address) is
 * reserved, not routed (RFC 1112 §4, RFC 919).
 */
const SPECIAL_RANGES: readonly [string, string][] = [
  ['0.0.0.0/8', '"this network" (all zeros)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved (with the broadcast address)'],
  ['::/127', 'the unspecified and loopback addresses'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

export const specialRanges: Rule = (ctx) =>
  networkCidrs(ctx, []).flatMap((c) => {
    const hit = SPECIAL_RANGES.find(([range]) => {
      const special = parseCidr(range);
      return special !== undefined && overlaps(c.cidr, special);
    });
    if (hit === undefined) return [];
    const message = `the ${c.field} ${formatCidr(c.cidr)} overlaps ${hit[0]}, ${hit[1]}: no node, pod or Service can use those addresses`;
    const hint = 'choose a private range such as 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 (IPv6: fd00::/8)';
    // A loopback node network only ever holds stand-ins for hosts (tests: sshd on 127.0.0.x): said, not refused.
    return [
      c.path === 'spec.network.nodeCidr' && hit[1] === 'loopback'
        ? warning(
            'cidr.special',
            c.path,
            `the node network ${formatCidr(c.cidr)} is loopback: real nodes cannot use it (the kubelet refuses a loopback node IP)`,
            hint,
          )
        : error('cidr.special', c.path, message, hint),
    ];
  });

/**
 * kubeadm refuses a service network of more than 2^20 addresses: "specified service subnet is too large; for
 * 32-bit addresses, the mask must be >= 12" (cmd/kubeadm/app/apis/kubeadm/validation ValidateServiceSubnetSize,
 * constants.MaximumBitsForServiceSubnet = 20, in every release from 1.34 to 1.37).
 */
const MAX_SERVICE_BITS = 20;

export const serviceCidrSize: Rule = (ctx) =>
  cidrList(ctx.spec.network.serviceCidr, 'spec.network.serviceCidr', 'service network', []).flatMap((c) => {
    const bits = c.cidr.family === 4 ? 32 : 128;
    if (bits - c.cidr.prefix <= MAX_SERVICE_BITS) return [];
    return [
      error(
        'network.service-cidr-too-large',
        c.path,
        `the service network ${formatCidr(c.cidr)} is too large: kubeadm takes at most 2^${MAX_SERVICE_BITS} Service addresses`,
        `use a /${bits - MAX_SERVICE_BITS} or smaller network (the default is 10.96.0.0/12)`,
      ),
    ];
  });

/**
 * kubeadm gives CoreDNS the tenth address of the (first) service network
 * (cmd/kubeadm/app/constants GetDNSIP: GetIndexedIP(subnet, 10)) and the API
 * server's Service the first: a service network needs more than ten.
 */
export const serviceCidrRoom: Rule = (ctx) =>
  cidrList(ctx.spec.network.serviceCidr, 'spec.network.serviceCidr', 'service network', []).flatMap((c) => {
    const bits = c.cidr.family === 4 ? 32 : 128;
    if (1n << BigInt(bits - c.cidr.prefix) > 10n) return [];
    return [
      error(
        'network.service-cidr-too-small',
        c.path,
        `the service network ${formatCidr(c.cidr)} has no room: the API server takes its first address and CoreDNS its tenth`,
        `use a /${bits - 4} or larger (the default is 10.96.0.0/12)`,
      ),
    ];
  });

function nodeNetwork(ctx: RuleContext): Cidr | undefined {
  const cidr = parseCidr(ctx.spec.network.nodeCidr);
  return cidr?.family === 4 ? cidr : undefined;
}

export const gatewayInNetwork: Rule = (ctx) => {
  const net = nodeNetwork(ctx);
  const gw = ctx.spec.network.gateway;
  if (net === undefined || gw === undefined) return [];
  const ip = parseIp(gw);
  const path = 'spec.network.gateway';
  if (ip === undefined) return [error('network.gateway', path, `"${gw}" is not an IP address`)];
  if (!contains(net, ip))
    return [
      error('network.gateway', path, `the gateway ${gw} is outside the node network ${ctx.spec.network.nodeCidr}`),
    ];
  if (ip.value === net.base || ip.value === lastAddress(net)) {
    return [
      error(
        'network.gateway',
        path,
        `the gateway ${gw} is the network or broadcast address of ${ctx.spec.network.nodeCidr}`,
      ),
    ];
  }
  return [];
};

export const roomForNodes: Rule = (ctx) => {
  const net = nodeNetwork(ctx);
  // Only a driver that creates the machines allocates their addresses from the network.
  if (net === undefined || !driverTraits(ctx.spec.driver).createsMachines) return [];
  const needed = BigInt(ctx.nodes.length + 1);
  if (needed <= usableHosts(net)) return [];
  const why = `the node network ${ctx.spec.network.nodeCidr} has ${usableHosts(net)} usable addresses; ${ctx.nodes.length} nodes and the gateway need ${needed}`;
  return [error('network.too-small', 'spec.network.nodeCidr', why, 'use a larger node network (a smaller prefix)')];
};

export const podCidrFitsNodes: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const [first] = cidrList(ctx.spec.network.podCidr, 'spec.network.podCidr', 'pod network', []);
  if (first === undefined || first.cidr.family !== 4) return out;
  const kubeNodes = ctx.nodes.filter((n) => n.role !== 'services').length;
  if (first.cidr.prefix > NODE_POD_PREFIX) {
    out.push(
      error(
        'network.pod-cidr-too-small',
        'spec.network.podCidr',
        `the pod network must be /${NODE_POD_PREFIX} or larger: each node gets a /${NODE_POD_PREFIX}`,
      ),
    );
  } else if (subnetCount(first.cidr, NODE_POD_PREFIX) < BigInt(kubeNodes)) {
    out.push(
      error(
        'network.pod-cidr-too-small',
        'spec.network.podCidr',
        `the pod network holds ${subnetCount(first.cidr, NODE_POD_PREFIX)} node subnets (/${NODE_POD_PREFIX}) but the cluster has ${kubeNodes} nodes`,
        'use a larger pod network',
      ),
    );
  }
  return out;
};

/**
 * Windows overlay (vxlan) networking has no IPv6 between pods (Kubernetes docs,
 * "Networking on Windows" → limitations: dual-stack only on l2bridge networks).
 */
export const dualStackWithWindows: Rule = (ctx) => {
  if (!hasWindows(ctx) || ctx.spec.cni.backend !== 'vxlan') return [];
  const out: Diagnostic[] = [];
  for (const [field, path] of [
    ['podCidr', 'spec.network.podCidr'],
    ['serviceCidr', 'spec.network.serviceCidr'],
  ] as const) {
    const cidrs = cidrList(ctx.spec.network[field], path, field, []);
    if (cidrs.some((c) => c.cidr.family === 6)) {
      out.push(
        error(
          'network.ipv6-windows-overlay',
          path,
          'IPv6 or dual-stack networking is not supported with Windows nodes on an overlay network',
          'use IPv4 ranges only',
        ),
      );
    }
  }
  return out;
};

export const existingHostAddresses: Rule = (ctx) => {
  if (driverTraits(ctx.spec.driver).createsMachines) return [];
  const net = nodeNetwork(ctx);
  const out: Diagnostic[] = [];
  const seen = new Map<bigint, string>();
  const macs = new Map<string, string>();
  const gateway = ctx.spec.network.gateway === undefined ? undefined : parseIp(ctx.spec.network.gateway)?.value;
  ctx.spec.hosts.forEach((host, i) => {
    // Two reservations for one MAC: dnsmasq would hand that machine either address.
    const macOwner = host.mac === undefined ? undefined : macs.get(host.mac);
    if (macOwner !== undefined)
      out.push(
        error(
          'nodes.mac-duplicate',
          `spec.infrastructure.hosts[${i}].mac`,
          `${host.name} has the same MAC as ${macOwner}`,
          'give every host the MAC of its own interface',
        ),
      );
    if (host.mac !== undefined && macOwner === undefined) macs.set(host.mac, host.name);
    const path = `spec.infrastructure.hosts[${i}].ip`;
    const ip = parseIp(host.ip);
    if (ip === undefined || ip.family !== 4) {
      out.push(
        error(
          'nodes.ip-invalid',
          path,
          `"${host.ip}" is not an IPv4 address`,
          'when address is a host name, give the node IP in "ip"',
        ),
      );
      return;
    }
    if (net !== undefined && !contains(net, ip)) {
      const message = `${host.name}'s IP ${host.ip} is outside the node network ${ctx.spec.network.nodeCidr}`;
      out.push(
        ctx.spec.cni.backend === 'host-gw'
          ? error(
              'cni.host-gw-segment',
              path,
              `${message}: host-gw needs every node on one L2 segment`,
              'use vxlan across routed networks',
            )
          : error(
              'nodes.ip-outside-network',
              path,
              message,
              'set spec.network.nodeCidr to the network the hosts are on',
            ),
      );
    }
    const other = seen.get(ip.value);
    if (other !== undefined) out.push(error('nodes.ip-duplicate', path, `${host.name} has the same IP as ${other}`));
    if (ip.value === gateway) out.push(error('nodes.ip-duplicate', path, `${host.name}'s IP is the gateway address`));
    seen.set(ip.value, host.name);
  });
  return out;
};
