// exportInventory: the planned cluster as an Ansible inventory (kubespray's
// group names plus `windows`, `linux`, `services`, `hypervisors`), so other
// tools can reach the same hosts. Deterministic: hosts in model order.
import { stringify } from 'yaml';
import type { ClusterModel } from '../../model/resolve.js';
import type { HostConnection } from '../../model/types.js';
import { iniValue } from '../../util/escape/index.js';

export type InventoryFormat = 'ini' | 'yaml';

export interface ExportedInventory {
  /** Host → its vars, in model order. */
  readonly hosts: Map<string, Record<string, string | number>>;
  /** Group → hosts; `k8s_cluster` holds child groups instead. */
  readonly groups: Map<string, string[]>;
}

export const CLUSTER_CHILDREN = ['kube_control_plane', 'kube_node'] as const;

export function inventoryOf(model: ClusterModel): ExportedInventory {
  const byName = new Map(model.hosts.map((h) => [h.name, h]));
  const hosts = new Map<string, Record<string, string | number>>();
  const groups = new Map<string, string[]>(
    ['kube_control_plane', 'etcd', 'kube_node', 'windows', 'linux', 'services', 'hypervisors'].map((g) => [g, []]),
  );
  const add = (group: string, host: string) => groups.get(group)?.push(host);
  for (const h of model.hosts) {
    if (model.nodes.some((n) => n.name === h.name)) continue;
    hosts.set(h.name, hostVars(h, undefined));
    add('hypervisors', h.name);
    add('linux', h.name);
  }
  for (const n of model.nodes) {
    hosts.set(n.name, hostVars(byName.get(n.name), n.ip));
    if (n.role === 'control-plane') {
      add('kube_control_plane', n.name);
      add('etcd', n.name);
    }
    if (n.role === 'worker' || (n.role === 'control-plane' && n.schedulable)) add('kube_node', n.name);
    if (n.role === 'services') add('services', n.name);
    add(n.osFamily === 'windows' ? 'windows' : 'linux', n.name);
  }
  return { hosts, groups };
}

function hostVars(h: HostConnection | undefined, ip: string | undefined): Record<string, string | number> {
  if (h === undefined) return ip === undefined ? {} : { ansible_host: ip, ip };
  const b = h.bastion;
  return {
    ansible_host: h.address,
    ...(ip === undefined || ip === h.address ? {} : { ip }),
    ansible_user: h.user ?? (h.shell === 'powershell' ? 'Administrator' : 'root'),
    ansible_port: h.port,
    ...(h.identityFile === undefined ? {} : { ansible_ssh_private_key_file: h.identityFile }),
    ...(b === undefined
      ? {}
      : { ansible_ssh_common_args: `-o ProxyJump=${b.user === undefined ? '' : `${b.user}@`}${b.address}:${b.port}` }),
    ...(h.shell === 'powershell' ? { ansible_connection: 'ssh', ansible_shell_type: 'powershell' } : {}),
  };
}

export function renderInventory(inv: ExportedInventory, format: InventoryFormat, header: string): string {
  return format === 'ini' ? renderIni(inv, header) : renderYaml(inv, header);
}

function renderIni(inv: ExportedInventory, header: string): string {
  const lines = [comment(header), '[all]'];
  for (const [name, vars] of inv.hosts)
    lines.push([name, ...Object.entries(vars).map(([k, v]) => `${k}=${iniValue(v)}`)].join(' '));
  for (const [group, members] of inv.groups) lines.push('', `[${group}]`, ...members);
  lines.push('', '[k8s_cluster:children]', ...CLUSTER_CHILDREN, '');
  return lines.join('\n');
}

function renderYaml(inv: ExportedInventory, header: string): string {
  const children: Record<string, unknown> = {};
  for (const [group, members] of inv.groups)
    children[group] = members.length === 0 ? {} : { hosts: Object.fromEntries(members.map((m) => [m, null])) };
  children['k8s_cluster'] = { children: Object.fromEntries(CLUSTER_CHILDREN.map((c) => [c, null])) };
  const doc = { all: { hosts: Object.fromEntries(inv.hosts), children } };
  return `${comment(header)}\n${stringify(doc, { lineWidth: 0, nullStr: '' })}`;
}

/** A one-line `#` comment: control characters (a newline would end it) shown as \uXXXX. */
function comment(text: string): string {
  return `# ${text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}`;
}
