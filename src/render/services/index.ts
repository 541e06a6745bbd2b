// renderServices: model → every file the services node needs, honouring the
// spec's toggles (dns, loadBalancer, dhcp, registry). Pure.
import type { ClusterModel } from '../../model/resolve.js';
import type { RenderedArtifact } from '../../render/types.js';
import { renderBind } from './bind.js';
import { renderDnsmasq } from './dnsmasq.js';
import { servicesFacts } from './facts.js';
import { renderHaproxy } from './haproxy.js';
import { renderRegistryConfig } from './registry.js';
import { renderFilesServer } from './files.js';

export function renderServices(model: ClusterModel): RenderedArtifact[] {
  const facts = servicesFacts(model);
  if (facts === undefined) return [];
  const t = facts.toggles;
  return [
    ...(t.loadBalancer ? [renderHaproxy(facts)] : []),
    ...(t.dns ? renderBind(model, facts, facts.forwarders === undefined ? {} : { forwarders: facts.forwarders }) : []),
    ...(t.dhcp ? [renderDnsmasq(facts)] : []),
    ...(t.registry ? [renderRegistryConfig(facts)] : []),
    // The download cache: every node binary comes from here.
    ...renderFilesServer(facts),
  ];
}
