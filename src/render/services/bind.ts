// Bind on the services node: the cluster's forward zone (every node, `api`,
// `api-int`, `*.apps`, `registry`), the node network's reverse zone, and
// recursion for the node and pod networks through configurable forwarders.
import { createHash } from 'node:crypto';
import type { ClusterModel } from '../../model/resolve.js';
import type { RenderedArtifact } from '../../render/types.js';
import { ptrLabel, type ServicesFacts } from './facts.js';

export const NAMED_CONF = '/etc/bind/named.conf';
export const ZONE_DIR = '/etc/bind/kubemix';

export interface BindOptions {
  /** Upstream resolvers; default: the node network's gateway. */
  readonly forwarders?: readonly string[];
}

export function zoneFile(zone: string): string {
  return `${ZONE_DIR}/db.${zone}`;
}

export function renderBind(model: ClusterModel, facts: ServicesFacts, options: BindOptions = {}): RenderedArtifact[] {
  const file = (remotePath: string, content: string): RenderedArtifact => ({
    node: facts.node.name,
    remotePath,
    mode: '0644',
    owner: 'root:bind',
    content,
  });
  return [
    file(NAMED_CONF, namedConf(model, facts, options.forwarders ?? [facts.gateway])),
    file(zoneFile(facts.zone), forwardZone(model, facts)),
    file(zoneFile(facts.reverseZone), reverseZone(facts)),
  ];
}

function namedConf(model: ClusterModel, facts: ServicesFacts, forwarders: readonly string[]): string {
  const clients = [facts.nodeCidr, ...model.podNetworks.all];
  const list = (items: readonly string[]): string => items.map((i) => `${i}; `).join('');
  const zone = (name: string): string =>
    `zone "${name}" {\n    type primary;\n    file "${zoneFile(name)}";\n    allow-update { none; };\n};`;
  return `// Rendered by kubemix for ${facts.zone}; re-plan instead of editing.
options {
    directory "/var/cache/bind";
    listen-on { 127.0.0.1; ${facts.node.ip}; };
    listen-on-v6 { none; };
    allow-query { localhost; ${list(clients)}};
    recursion yes;
    allow-recursion { localhost; ${list(clients)}};
    forwarders { ${list(forwarders)}};
    forward only;
    // The forwarders resolve for us; validating again here breaks every
    // lookup whenever an upstream resolver strips DNSSEC records.
    dnssec-validation no;
};

${zone(facts.zone)}

${zone(facts.reverseZone)}
`;
}

function forwardZone(model: ClusterModel, facts: ServicesFacts): string {
  const services = facts.node.ip;
  const lb = facts.toggles.loadBalancer;
  const records: [string, string][] = [
    ['ns1', services],
    ['api', model.cluster.apiEndpoint.address],
    ['api-int', model.cluster.apiEndpoint.address],
    ['*.apps', lb ? services : (facts.ingress[0]?.ip ?? services)],
    ...(facts.toggles.registry ? [['registry', services] as [string, string]] : []),
    ...[...facts.members, facts.node].map((n): [string, string] => [n.name, n.ip]),
  ];
  const body = records.map(([name, ip]) => `${name.padEnd(16)} IN A     ${ip}`);
  return zoneText(facts.zone, facts.zone, ['@                IN NS    ns1', ...body]);
}

function reverseZone(facts: ServicesFacts): string {
  const nodes = [...facts.members, facts.node];
  const body = nodes.map((n) => `${ptrLabel(n.ip, facts.reverseOctets).padEnd(16)} IN PTR   ${n.name}.${facts.zone}.`);
  return zoneText(facts.reverseZone, facts.zone, [`@                IN NS    ns1.${facts.zone}.`, ...body]);
}

/**
 * A zone with its SOA. The serial is derived from the records, not the clock,
 * so the same plan renders the same bytes and any change moves the serial.
 */
function zoneText(origin: string, cluster: string, records: readonly string[]): string {
  const serial = Number.parseInt(createHash('sha256').update(records.join('\n')).digest('hex').slice(0, 7), 16);
  return `; Rendered by kubemix; re-plan instead of editing.
$ORIGIN ${origin}.
$TTL 300
@                IN SOA   ns1.${cluster}. hostmaster.${cluster}. (
                          ${serial} ; serial (hash of the records)
                          3600       ; refresh
                          600        ; retry
                          604800     ; expire
                          300 )      ; negative-answer TTL
${records.join('\n')}
`;
}
