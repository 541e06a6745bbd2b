// renderServices: model → every file the services node needs, honouring the
// spec's toggles (dns, loadBalancer, dhcp, registry). Pure.
import type { ClusterModel } from '../../model/resolve.js';
import type { RenderedArtifact } from '../../plan/types.js';
import { renderBind, type BindOptions } from './bind.js';
import { renderDnsmasq } from './dnsmasq.js';
import { servicesFacts } from './facts.js';
import { renderHaproxy } from './haproxy.js';
import { renderRegistryConfig } from './registry.js';

export function renderServices(model: ClusterModel, options: BindOptions = {}): RenderedArtifact[] {
  const facts = servicesFacts(model);
  if (facts === undefined) return [];
  const t = facts.toggles;
  return [
    ...(t.loadBalancer ? [renderHaproxy(facts)] : []),
    ...(t.dns ? renderBind(model, facts, options) : []),
    ...(t.dhcp ? [renderDnsmasq(facts)] : []),
    ...(t.registry ? [renderRegistryConfig(facts)] : []),
  ];
}
