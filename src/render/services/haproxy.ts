// HAProxy on the services node: the cluster's API endpoint (6443 → every
// controller, health-checked on /readyz) and ingress (80/443 → workers, or
// the controllers when there are none), plus stats with a monitor URI.
import { SERVICES } from '../../matrix/index.js';
import { API_PORT } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import type { ServicesFacts } from './facts.js';

export const HAPROXY_CONFIG = '/etc/haproxy/haproxy.cfg';

export function renderHaproxy(facts: ServicesFacts): RenderedArtifact {
  const sections = [
    `# Rendered by kubemix for ${facts.zone}; re-plan instead of editing.`,
    GLOBAL,
    DEFAULTS,
    stats(),
    frontendBackend('kubernetes-api', API_PORT, facts.controllers, [
      // /readyz is readable anonymously (system:public-info-viewer): a
      // controller whose etcd or informers are not ready leaves the pool.
      '    option httpchk GET /readyz',
      '    http-check expect status 200',
      ...apiCheckSlack(facts),
      `    default-server check check-ssl verify none inter 5s fall ${facts.apiProbes?.livenessFailureThreshold ?? 3} rise 2`,
    ]),
    frontendBackend('ingress-http', 80, facts.ingress, ['    default-server check inter 5s fall 3 rise 2']),
    frontendBackend('ingress-https', 443, facts.ingress, ['    default-server check inter 5s fall 3 rise 2']),
  ];
  return {
    node: facts.node.name,
    remotePath: HAPROXY_CONFIG,
    mode: '0644',
    owner: 'root:root',
    content: `${sections.join('\n\n')}\n`,
  };
}

/**
 * On slow machines (spec.kubernetes.controlPlaneProbes) HAProxy waits for /readyz as long as the
 * kubelet's probes do, and takes as many failed checks before it drops an API server as the kubelet
 * before it restarts one: with the defaults, an emulated control plane whose /readyz took over 5 s
 * was taken out of the pool again and again while it served, and a worker's join could not
 * discover it (the real-cluster tier's run 13).
 */
function apiCheckSlack(facts: ServicesFacts): string[] {
  const t = facts.apiProbes?.timeoutSeconds;
  return t === undefined ? [] : [`    timeout check ${t}s`];
}

const GLOBAL = `global
    log /dev/log local0
    maxconn 8192
    user haproxy
    group haproxy
    stats socket /run/haproxy/admin.sock mode 660 level admin`;

// TCP passthrough: TLS ends at the apiserver and the ingress controllers.
const DEFAULTS = `defaults
    mode tcp
    log global
    option tcplog
    option dontlognull
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout check 5s`;

function stats(): string {
  return `frontend stats
    mode http
    bind *:${SERVICES.haproxyStatsPort}
    monitor-uri /healthz
    stats enable
    stats uri /stats
    stats refresh 10s`;
}

function frontendBackend(name: string, port: number, servers: readonly PlanNode[], options: readonly string[]): string {
  return [
    `frontend ${name}`,
    `    bind *:${port}`,
    `    default_backend ${name}`,
    '',
    `backend ${name}`,
    '    balance roundrobin',
    ...options,
    ...servers.map((s) => `    server ${s.name} ${s.ip}:${port}`),
  ].join('\n');
}
