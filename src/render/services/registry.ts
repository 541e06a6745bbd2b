// The private OCI registry on the services node: the CNCF distribution
// registry (Debian's `docker-registry`), TLS from the cluster CA, htpasswd
// auth. Key, certificate and htpasswd are made on the host at run time (see
// plan/tasks/registry.ts): only their paths are in the artifact.
import { SERVICES } from '../../matrix/index.js';
import type { RenderedArtifact } from '../../render/types.js';
import type { ServicesFacts } from './facts.js';

export const REGISTRY_PATHS = {
  config: '/etc/docker/registry/config.yml',
  tlsDir: '/etc/docker/registry/tls',
  certificate: '/etc/docker/registry/tls/registry.crt',
  key: '/etc/docker/registry/tls/registry.key',
  caCertificate: '/etc/docker/registry/tls/ca.crt',
  htpasswd: '/etc/docker/registry/htpasswd',
  storage: '/var/lib/docker-registry',
} as const;

export function renderRegistryConfig(facts: ServicesFacts): RenderedArtifact {
  const p = REGISTRY_PATHS;
  const content = `# Rendered by kubemix for ${facts.zone}; re-plan instead of editing.
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: ${p.storage}
  delete:
    enabled: true
http:
  addr: :${SERVICES.registryPort}
  host: https://${facts.registryEndpoint}
  headers:
    X-Content-Type-Options: [nosniff]
  tls:
    certificate: ${p.certificate}
    key: ${p.key}
auth:
  htpasswd:
    realm: ${facts.registryHost}
    path: ${p.htpasswd}
`;
  // Group-readable by the daemon's group only: it names where the key lives.
  return { node: facts.node.name, remotePath: p.config, mode: '0640', owner: 'root:docker-registry', content };
}
