// The spec the VM tier's existing-hosts tests write: Kubernetes 1.36, the VMs
// as `existing` hosts on their network-namespace block (198.51.100.0/24, a
// /28 per block), reached with the test's client key.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface ExistingVmSpec {
  readonly cluster: string;
  readonly domain: string;
  /** The VM network's block number and gateway (test/e2e/vm.ts VmNet). */
  readonly net: { readonly block: number; readonly gateway: string };
  readonly hosts: readonly unknown[];
  /** spec.downloads, when the test pins its own files. */
  readonly downloads?: Record<string, unknown>;
}

/** One `infrastructure.hosts` entry: a Debian 12 VM reached as root with `identityFile`. */
export function existingVmHost(
  vm: { readonly name: string; readonly address: string },
  roles: readonly string[],
  identityFile: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { name: vm.name, address: vm.address, roles, os: 'debian-12', identityFile, ...extra };
}

export function writeExistingVmSpec(file: string, s: ExistingVmSpec): void {
  writeFileSync(
    file,
    stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: s.cluster },
      spec: {
        domain: s.domain,
        kubernetes: { version: '1.36' },
        network: { nodeCidr: `198.51.100.${s.net.block * 16}/28`, gateway: s.net.gateway },
        infrastructure: { driver: 'existing', hosts: s.hosts },
        ...(s.downloads === undefined ? {} : { downloads: s.downloads }),
      },
    }),
  );
}
