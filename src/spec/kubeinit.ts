// Kubeinit interop: `<distro>-<driver>-<controllers>-<computes>-<hypervisors>`
// plus `--hypervisors` (hypervisor_hosts_spec) and `--nodes`
// (cluster_nodes_spec), turned into an ordinary spec document so it goes
// through exactly the same validation as a YAML file.
import { LINUX_DISTROS, WINDOWS } from '../matrix/index.js';
import { MAX_DISK_MIB, MAX_RAM_MIB, SPEC_API_VERSION } from './checks.js';
import { didYouMean } from './suggest.js';
import { applyOverrides } from './kubeinit-nodes.js';
import type { KubeinitSpec, NodeAttributes, NodeOverride } from './kubeinit-types.js';
import { existingHostsFor } from './kubeinit-existing.js';
import { fail, parseBracketList, parseYamlList, type Parsed } from './kubeinit-lists.js';
import { parseHypervisorList, type HypervisorEntry } from './kubeinit-hypervisors.js';

export type { Parsed } from './kubeinit-lists.js';

export const KUBEINIT_DEFAULTS = { cluster: 'k8scluster', domain: 'kubeinit.local' } as const;

const UNSUPPORTED_DISTROS = ['okd', 'ocp', 'rke', 'eks', 'cdk', 'kid', 'k3s', 'openshift'];

/** Does the text have the shape of a Kubeinit spec string (before checking its values)? */
export function looksLikeKubeinitSpec(text: string): boolean {
  return /^[a-z0-9]+-[a-z0-9]+(-[0-9a-z]+){3,}$/.test(text);
}

export function parseKubeinitSpec(text: string): Parsed<KubeinitSpec> {
  const path = 'SPEC';
  const parts = text.split('-');
  if (!looksLikeKubeinitSpec(text) || parts.length < 5) {
    return fail(
      'kubeinit.format',
      path,
      `"${text}" is neither a spec file nor a Kubeinit spec string`,
      'give a YAML spec file, or a string like k8s-libvirt-1-1-1 (distro-driver-controllers-computes-hypervisors)',
    );
  }
  // Kubeinit ignores fields after the fifth; so do we.
  const [distro = '', driver = '', controllers = '', computes = '', hypervisors = ''] = parts;
  if (distro !== 'k8s') {
    const known = UNSUPPORTED_DISTROS.includes(distro);
    return fail(
      'kubeinit.distro-unsupported',
      path,
      known
        ? `distro "${distro}" is not supported by kubemix (only vanilla Kubernetes, "k8s")`
        : `unknown distro "${distro}"`,
      'use k8s, e.g. k8s-libvirt-1-1-1',
    );
  }
  if (driver !== 'libvirt' && driver !== 'existing') {
    const guess = didYouMean(driver, ['libvirt', 'existing']);
    return fail(
      'kubeinit.driver',
      path,
      `unknown driver "${driver}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
      'use libvirt or existing',
    );
  }
  const counts = [controllers, computes, hypervisors].map((p) => (/^\d+$/.test(p) ? Number(p) : Number.NaN));
  const [nc = NaN, nw = NaN, nh = NaN] = counts;
  if (![1, 3, 5].includes(nc))
    return fail('kubeinit.controllers', path, `controllers must be 1, 3 or 5, got "${controllers}"`);
  if (!Number.isInteger(nw) || nw > 999)
    return fail('kubeinit.computes', path, `computes must be a whole number from 0 to 999, got "${computes}"`);
  if (!Number.isInteger(nh) || nh < 1 || nh > 99)
    return fail('kubeinit.hypervisors', path, `hypervisors must be a whole number from 1 to 99, got "${hypervisors}"`);
  return { ok: true, value: { distro: 'k8s', driver, controllers: nc, computes: nw, hypervisors: nh } };
}

/** `--nodes` in either Kubeinit form: `[[k=v,...],...]` or a JSON/YAML list of maps. */
export function parseNodeOverrides(text: string): Parsed<Record<string, unknown>[]> {
  const path = '--nodes';
  const trimmed = text.trim();
  const example = '[[when_group=compute_nodes,os=windows]] or [{when_group: compute_nodes, os: windows}]';
  return /^\[\s*\[/.test(trimmed)
    ? parseBracketList(trimmed, path, 'nodes.syntax', example)
    : parseYamlList(trimmed, path, 'nodes.syntax', example);
}

export interface KubeinitInput {
  readonly spec: string;
  readonly hypervisors?: string | undefined;
  readonly nodes?: string | undefined;
}

/** The YAML-spec document equivalent to a Kubeinit string and its overrides. */
export function kubeinitToSpecDocument(input: KubeinitInput): Parsed<Record<string, unknown>> {
  const spec = parseKubeinitSpec(input.spec);
  if (!spec.ok) return spec;
  const k = spec.value;
  let hypervisors: HypervisorEntry[] = Array.from({ length: k.hypervisors }, (_, i) => ({
    address: `hypervisor-${String(i + 1).padStart(2, '0')}`,
  }));
  if (input.hypervisors !== undefined) {
    if (k.driver === 'existing')
      return fail(
        'kubeinit.hypervisors-existing',
        '--hypervisors',
        'the existing driver has no hypervisors: its nodes are the machines you already have',
        'drop --hypervisors, or use the libvirt driver (k8s-libvirt-…)',
      );
    const list = parseHypervisorList(input.hypervisors);
    if (!list.ok) return list;
    if (list.value.length !== k.hypervisors) {
      return fail(
        'kubeinit.hypervisor-count',
        '--hypervisors',
        `${list.value.length} hypervisors given, but the spec string says ${k.hypervisors}`,
        'give as many hypervisors as the last number of the spec string',
      );
    }
    hypervisors = list.value;
  }
  let overrides: NodeOverride[] = [];
  if (input.nodes !== undefined) {
    const raw = parseNodeOverrides(input.nodes);
    if (!raw.ok) return raw;
    const checked = checkOverrides(raw.value);
    if (!checked.ok) return checked;
    overrides = checked.value;
    const sized = overrides.findIndex(
      (o) => o.set.vcpus !== undefined || o.set.ram !== undefined || o.set.disk !== undefined,
    );
    if (k.driver === 'existing' && sized >= 0) {
      return fail(
        'nodes.value',
        `--nodes[${sized}]`,
        'vcpus, ram and disk size VMs kubemix creates; with the existing driver the hosts already have theirs',
        'drop them, or use the libvirt driver',
      );
    }
  }
  const nodes = applyOverrides(k, overrides);
  const infrastructure =
    k.driver === 'libvirt'
      ? {
          driver: 'libvirt',
          hypervisors: hypervisors.map((h, i) => ({ name: `hypervisor-${String(i + 1).padStart(2, '0')}`, ...h })),
        }
      : { driver: 'existing', hosts: existingHostsFor(nodes) };
  const document: Record<string, unknown> = {
    apiVersion: SPEC_API_VERSION,
    kind: 'Cluster',
    metadata: { name: KUBEINIT_DEFAULTS.cluster },
    spec: {
      domain: KUBEINIT_DEFAULTS.domain,
      infrastructure,
      ...(k.driver === 'libvirt' ? { nodes: { controlPlane: nodes.controlPlane, workers: nodes.workers } } : {}),
      services: nodes.services,
    },
  };
  return { ok: true, value: document };
}

/** The spec's own bound on vcpus (schema.ts). */
const MAX_VCPUS = 512;
const OVERRIDE_KEYS = ['when_group', 'when_type', 'when_distro', 'os', 'vcpus', 'ram', 'disk'];
const GROUPS = ['controller_nodes', 'compute_nodes', 'service_nodes'];

function checkOverrides(entries: Record<string, unknown>[]): Parsed<NodeOverride[]> {
  const out: NodeOverride[] = [];
  for (const [i, entry] of entries.entries()) {
    const path = `--nodes[${i}]`;
    for (const key of Object.keys(entry)) {
      if (!OVERRIDE_KEYS.includes(key)) {
        const guess = didYouMean(key, OVERRIDE_KEYS);
        return fail(
          'nodes.unknown-key',
          `${path}.${key}`,
          `unknown key "${key}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
          `keys: ${OVERRIDE_KEYS.join(', ')}`,
        );
      }
    }
    const notText = ['when_group', 'when_type', 'when_distro', 'os'].find(
      (key) => entry[key] !== undefined && typeof entry[key] !== 'string',
    );
    if (notText !== undefined) {
      const example = notText === 'os' ? 'windows' : notText === 'when_group' ? 'compute_nodes' : '…';
      return fail(
        'nodes.value',
        `${path}.${notText}`,
        `${notText} must be a single name, got ${JSON.stringify(entry[notText])}`,
        `e.g. ${notText}: ${example}`,
      );
    }
    const group = entry.when_group === undefined ? undefined : String(entry.when_group);
    if (group !== undefined && !GROUPS.includes(group)) {
      return fail('nodes.group', `${path}.when_group`, `unknown group "${group}"`, `groups: ${GROUPS.join(', ')}`);
    }
    const attributes = overrideAttributes(entry, path);
    if (!attributes.ok) return attributes;
    out.push({
      ...(group === undefined ? {} : { group }),
      ...(entry.when_type === undefined ? {} : { type: String(entry.when_type) }),
      ...(entry.when_distro === undefined ? {} : { distro: String(entry.when_distro) }),
      set: attributes.value,
    });
  }
  return { ok: true, value: out };
}

function overrideAttributes(entry: Record<string, unknown>, path: string): Parsed<NodeAttributes> {
  const set: { os?: string; vcpus?: number; ram?: string; disk?: string } = {};
  if (entry.os !== undefined) {
    const os = resolveOsAlias(String(entry.os));
    if (os === undefined)
      return fail(
        'nodes.value',
        `${path}.os`,
        `unknown os "${String(entry.os)}"`,
        `use windows, windows-2022, windows-2025, ${LINUX_DISTROS.map((d) => d.alias ?? d.id).join(', ')}`,
      );
    set.os = os;
  }
  if (entry.vcpus !== undefined) {
    const n =
      typeof entry.vcpus === 'number' || (typeof entry.vcpus === 'string' && /^\d+$/.test(entry.vcpus))
        ? Number(entry.vcpus)
        : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_VCPUS)
      return fail(
        'nodes.value',
        `${path}.vcpus`,
        `vcpus must be a whole number from 1 to ${MAX_VCPUS}, got ${JSON.stringify(entry.vcpus)}`,
      );
    set.vcpus = n;
  }
  for (const key of ['ram', 'disk'] as const) {
    if (entry[key] === undefined) continue;
    if (typeof entry[key] !== 'number' && typeof entry[key] !== 'string')
      return fail(
        'nodes.value',
        `${path}.${key}`,
        `${key} must be a number or a size such as 16Gi, got ${JSON.stringify(entry[key])}`,
      );
    const size = kubeinitSize(String(entry[key]), key);
    if (size === undefined)
      return fail(
        'nodes.value',
        `${path}.${key}`,
        `${key} must be a number (${key === 'ram' ? 'KiB, as Kubeinit' : 'GiB'}) or a size such as 16Gi, at most ${key === 'ram' ? '64Ti' : '1024Ti'}, got "${String(entry[key])}"`,
      );
    set[key] = size;
  }
  return { ok: true, value: set };
}

/**
 * Kubeinit gives RAM in KiB (`16777216`) and disks as `25G`. Numbers past
 * what a machine can have are refused here, before they lose precision as
 * JavaScript numbers (10^23 KiB would print as 9.765625e+19 MiB).
 */
function kubeinitSize(text: string, key: 'ram' | 'disk'): string | undefined {
  if (/^[1-9]\d{0,15}$/.test(text)) {
    const n = Number(text);
    if (key === 'ram') return n <= MAX_RAM_MIB * 1024 ? `${Math.ceil(n / 1024)}Mi` : undefined;
    return n <= MAX_DISK_MIB / 1024 ? `${n}Gi` : undefined;
  }
  // Sizes with a unit are bounded by the schema, which reads the spec this string becomes.
  return /^[1-9]\d{0,15}(Mi|Gi|Ti|M|G|T)$/.test(text) ? text : undefined;
}

/** `windows` → windows-2022, `debian` → the matrix's Debian, full ids as they are. */
export function resolveOsAlias(os: string): string | undefined {
  if (os === 'windows') return 'windows-2022';
  if (WINDOWS.some((w) => w.os === os)) return os;
  const distro = LINUX_DISTROS.find((d) => d.id === os || d.alias === os);
  return distro?.id;
}
