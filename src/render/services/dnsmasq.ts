// dnsmasq on the services node, DHCP only: every planned MAC gets its planned
// IP and hostname (the libvirt driver creates the VMs with those MACs; existing
// hosts bring theirs in the spec), and
// the cluster DNS as resolver. DNS itself is Bind's job, so port=0.
import { formatIp, parseCidr } from '../../net/cidr.js';
import type { RenderedArtifact } from '../../render/types.js';
import type { ServicesFacts } from './facts.js';

export const DNSMASQ_CONFIG = '/etc/dnsmasq.d/kubemix.conf';

export function renderDnsmasq(facts: ServicesFacts): RenderedArtifact {
  const net = parseCidr(facts.nodeCidr);
  if (net === undefined || net.family !== 4) throw new Error(`DHCP needs an IPv4 node network, got ${facts.nodeCidr}`);
  const resolver = facts.toggles.dns ? facts.node.ip : facts.gateway;
  // `static`: only hosts with a reservation get a lease; nothing else on the
  // segment can take a node's address.
  const lines = [
    `# Rendered by kubemix for ${facts.zone}; re-plan instead of editing.`,
    'port=0',
    `listen-address=${facts.node.ip}`,
    'bind-dynamic',
    'dhcp-authoritative',
    `dhcp-range=${formatIp(4, net.base)},static,${maskOf(net.prefix)},12h`,
    `dhcp-option=option:router,${facts.gateway}`,
    `dhcp-option=option:dns-server,${resolver}`,
    `dhcp-option=option:domain-name,${facts.zone}`,
    `domain=${facts.zone}`,
    ...facts.dhcpClients.map((n) => `dhcp-host=${n.mac},${n.ip},${n.name},infinite`),
  ];
  return {
    node: facts.node.name,
    remotePath: DNSMASQ_CONFIG,
    mode: '0644',
    owner: 'root:root',
    content: `${lines.join('\n')}\n`,
  };
}

function maskOf(prefix: number): string {
  const mask = prefix === 0 ? 0n : ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix)) - 1n);
  return formatIp(4, mask);
}
