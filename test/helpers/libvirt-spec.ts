// The spec the libvirt driver tests write for a one-hypervisor cluster on a
// network-namespace test host, and the model read back from it.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { readSpec } from '../../src/spec/read.js';

/** Guest sizes small enough for a TCG guest on the shared test machine. */
export const SMALL = { vcpus: 1, ram: '256Mi', disk: '1Gi' } as const;

export interface LibvirtSpec {
  readonly meta: { readonly name: string; readonly domain: string };
  /** The hypervisor entry: name, address, identityFile, libvirtUri and any other field. */
  readonly hypervisor: Record<string, unknown>;
  /** spec.network, when the test sets it. */
  readonly network?: Record<string, unknown>;
  readonly nodes: Record<string, unknown>;
  readonly services: Record<string, unknown>;
  readonly downloads?: Record<string, { readonly url: string; readonly sha256: string }>;
}

/** The spec's YAML text. */
export function libvirtSpecText(s: LibvirtSpec): string {
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: s.meta.name },
    spec: {
      domain: s.meta.domain,
      ...(s.network === undefined ? {} : { network: s.network }),
      infrastructure: { driver: 'libvirt', hypervisors: [s.hypervisor] },
      nodes: s.nodes,
      services: s.services,
      ...(s.downloads === undefined ? {} : { downloads: s.downloads }),
    },
  });
}

/** Writes the spec to `file` and resolves its model. */
export function writeLibvirtSpec(file: string, s: LibvirtSpec): { text: string; model: ClusterModel } {
  const text = libvirtSpecText(s);
  writeFileSync(file, text);
  return { text, model: resolveModel(readSpec({ kind: 'file', path: file, text })) };
}
