// containerd registry hosts (certs.d/<registry>/hosts.toml): the services
// node's registry trusted through the cluster CA, and every image mirror the
// spec names, tried before the registry it stands in for. Air-gapped
// (spec.airGapped), every upstream registry the cluster's images come from is
// served by the services registry alone (containerd docs/hosts.md: a mirror
// set as `server` means upstream is never consulted), under the path
// `/<upstream registry>/` (`kubemix up --images` pushes them there), so image
// names stay upstream's and an upgrade renames nothing.
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { servicesFacts } from '../services/facts.js';
import { hostsDir } from './paths.js';
import { tomlString as t } from '../../util/escape/index.js';
import { mirroredRegistries } from '../../model/images.js';
import { SECRET_NAMES } from '../../model/secret-names.js';

/** The cluster CA, placed beside the services registry's hosts.toml at run time. */
export function registryCaPath(endpoint: string): string {
  return `${hostsDir(endpoint)}/ca.crt`;
}

/** The services registry's `host:port`, when the cluster has one. */
export function servicesRegistry(model: ClusterModel): string | undefined {
  const facts = servicesFacts(model);
  return facts?.toggles.registry === true ? facts.registryEndpoint : undefined;
}

export function renderRegistryHosts(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  const own = servicesRegistry(model);
  const trust = (host: string): string =>
    own !== undefined && host === own ? `  ca = ${t(registryCaPath(own))}\n` : '';
  const file = (registry: string, body: string): RenderedArtifact => ({
    node: node.name,
    remotePath: `${hostsDir(registry)}/hosts.toml`,
    mode: '0644',
    owner: 'root:root',
    content: `# Rendered by kubemix; re-plan instead of editing.\n${body}`,
  });
  const out: RenderedArtifact[] = [];
  if (own !== undefined) {
    out.push(
      file(
        own,
        `server = ${t(`https://${own}`)}\n\n[host.${t(`https://${own}`)}]\n  capabilities = ['pull', 'resolve', 'push']\n${trust(own)}`,
      ),
    );
  }
  for (const { registry, content } of airGappedHosts(model, registryCaPath))
    out.push({ ...file(registry, content), mode: '0600' });
  for (const { registry, mirror } of model.mirrors.images) {
    const slash = mirror.replace(/^https?:\/\//, '').indexOf('/');
    const bare = mirror.replace(/^https?:\/\//, '');
    const host = slash < 0 ? bare : bare.slice(0, slash);
    // A mirror with a path serves the registry under that path: containerd must not add /v2 itself.
    const url = slash < 0 ? `https://${host}` : `https://${host}/v2${bare.slice(slash)}`;
    const override = slash < 0 ? '' : '  override_path = true\n';
    out.push(
      file(
        registry,
        `server = ${t(upstreamOf(registry))}\n\n[host.${t(url)}]\n  capabilities = ['pull', 'resolve']\n${override}${trust(host)}`,
      ),
    );
  }
  return out;
}

/** docker.io's API lives on another host name. */
function upstreamOf(registry: string): string {
  return registry === 'docker.io' ? 'https://registry-1.docker.io' : `https://${registry}`;
}

/**
 * Air-gapped: one hosts.toml per upstream registry the services registry
 * stands in for. The registry's htpasswd credential goes in an Authorization
 * header as `{{secret:…}}` (the executor fills it and uploads the file 0600);
 * `caPath` says where the node keeps the cluster CA beside the registry's own
 * hosts.toml (Linux and Windows lay them out differently).
 */
export function airGappedHosts(
  model: ClusterModel,
  caPath: (endpoint: string) => string,
): { readonly registry: string; readonly content: string }[] {
  const own = servicesRegistry(model);
  if (!model.airGapped || own === undefined) return [];
  return mirroredRegistries(model).map((registry) => ({
    registry,
    content: `# Air-gapped: ${registry} is served by the services registry only, under /${registry}/.
server = ${t(`https://${own}/v2/${registry}`)}
override_path = true
capabilities = ['pull', 'resolve']
ca = ${t(caPath(own))}

[header]
  Authorization = ${t(`Basic {{secret:${SECRET_NAMES.registryBasicAuth}}}`)}
`,
  }));
}
