// containerd on Windows: config.toml for the 2.x line (`version = 3` keys such as
// `plugins.'io.containerd.cri.v1.runtime'.cni`, containerd docs/cri/config.md;
// 2.3's `version = 4` moves the server's `[grpc]` into the
// `io.containerd.server.v1.grpc` plugin) and one hosts.toml per mirrored
// registry (containerd docs/hosts.md).
import { IMAGES, compareVersions, kubernetesRelease, windowsRelease } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { airGappedHosts, servicesRegistry } from '../containerd/hosts.js';
import { WIN } from './paths.js';
import { tomlBasicString, tomlString } from '../../util/escape/index.js';

/** A TOML string, literal where TOML allows: Windows paths keep their backslashes. */
const lit = tomlString;

/** The pause image for the node's build; 2025 needs ≥ 3.10.2 (ltsc2025 layer). */
export function sandboxImage(model: ClusterModel, node: PlanNode): string {
  const min = windowsRelease(node.os)?.minPause ?? IMAGES.pause.tag;
  const tag = model.versions.pause;
  if (compareVersions(tag, min) < 0)
    throw new Error(`pause ${tag} has no layer for ${node.os}; it needs ${min} or later`);
  return `${IMAGES.pause.repository}:${tag}`;
}

export function containerdConfig(model: ClusterModel, node: PlanNode): string {
  const version = model.versions.containerdConfigVersion;
  if (version !== '3' && version !== '4')
    throw new Error(
      `containerd ${model.versions.containerd}: only the version = 3 and 4 configs (containerd 2.x) are supported on Windows`,
    );
  const pipe = lit('\\\\.\\pipe\\containerd-containerd');
  // The pipe kubelet's containerRuntimeEndpoint names: a server section in version 3, a plugin's in 4.
  const server = version === '3' ? `[grpc]\n  address = ${pipe}\n\n` : '';
  const plugin = version === '3' ? '' : `  [plugins.'io.containerd.server.v1.grpc']\n    address = ${pipe}\n`;
  const unconfirmed = (kubernetesRelease(model.versions.kubernetesMinor)?.containerdLines.length ?? 0) === 0;
  const note = unconfirmed
    ? `# Kubernetes ${model.versions.kubernetesMinor} lists no containerd release yet: this pairing is unconfirmed upstream.\n`
    : '';
  return `# containerd ${model.versions.containerd} on ${node.name} (${node.os}), rendered by kubemix.
${note}version = ${version}
root = ${lit(WIN.containerdRoot)}
state = ${lit(WIN.containerdState)}

${server}[plugins]
${plugin}  [plugins.'io.containerd.cri.v1.images']
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = ${lit(sandboxImage(model, node))}
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = ${lit(WIN.containerdCerts)}

  [plugins.'io.containerd.cri.v1.runtime']
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [${lit(WIN.cniBin)}]
      conf_dir = ${lit(WIN.cniConfDir)}
      max_conf_num = 1
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runhcs-wcow-process'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runhcs-wcow-process]
        runtime_type = 'io.containerd.runhcs.v1'
`;
}

/** `mirror.example.com/k8s` → the mirror's endpoint and whether it has a path prefix. */
function mirrorEndpoint(mirror: string): { url: string; overridePath: boolean } {
  const withScheme = /^[a-z]+:\/\//.test(mirror) ? mirror : `https://${mirror}`;
  const u = new URL(withScheme);
  const path = u.pathname.replace(/\/+$/, '');
  return path === ''
    ? { url: `${u.protocol}//${u.host}`, overridePath: false }
    : { url: `${u.protocol}//${u.host}/v2${path}`, overridePath: true };
}

/** containerd's certs.d folder on Windows: no colons in paths, so `host:port` → `host_port_`. */
export function windowsHostsDir(registry: string): string {
  const i = registry.lastIndexOf(':');
  return `${WIN.containerdCerts}\\${i > 0 ? `${registry.slice(0, i)}_${registry.slice(i + 1)}_` : registry}`;
}

/** The cluster CA beside the services registry's hosts.toml (its TLS chains to it). */
export function windowsRegistryCa(registry: string): string {
  return `${windowsHostsDir(registry)}\\ca.crt`;
}

/**
 * One hosts.toml per mirrored registry, and one for the services node's
 * registry; a host that is the services registry trusts the cluster CA,
 * written beside it from the secret store (0600: it names a secret).
 */
export function registryHosts(model: ClusterModel, node: PlanNode): RenderedArtifact[] {
  const own = servicesRegistry(model);
  const trust = (host: string): string =>
    own !== undefined && host === own ? `  ca = ${lit(windowsRegistryCa(own))}\n` : '';
  const file = (registry: string, content: string): RenderedArtifact => ({
    node: node.name,
    remotePath: `${windowsHostsDir(registry)}\\hosts.toml`,
    mode: '0644',
    owner: 'Administrators',
    content,
  });
  const out: RenderedArtifact[] = [];
  if (own !== undefined) {
    out.push(
      file(
        own,
        `server = ${tomlBasicString(`https://${own}`)}\n\n[host.${tomlBasicString(`https://${own}`)}]\n  capabilities = ["pull", "resolve"]\n${trust(own)}`,
      ),
    );
    out.push({
      node: node.name,
      remotePath: windowsRegistryCa(own),
      mode: '0600',
      owner: 'Administrators',
      content: `{{secret:${SECRET_NAMES.clusterCaCert}}}\n`,
    });
  }
  // Air-gapped: each upstream registry served by the services registry alone (the same file as on Linux).
  for (const { registry, content } of airGappedHosts(model, windowsRegistryCa))
    out.push({ ...file(registry, content), mode: '0600' });
  for (const { registry, mirror } of model.mirrors.images) {
    const m = mirrorEndpoint(mirror);
    out.push(
      file(
        registry,
        `server = ${tomlBasicString(`https://${registry}`)}

[host.${tomlBasicString(m.url)}]
  capabilities = ["pull", "resolve"]
${m.overridePath ? '  override_path = true\n' : ''}${trust(new URL(m.url).host)}`,
      ),
    );
  }
  return out;
}
