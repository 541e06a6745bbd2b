// What kubemix reads from an Ansible inventory: hosts with their own vars,
// groups with hosts, child groups and vars, and the line each was written on
// (so every warning and error can name the inventory line).
import { InvalidSpecError, type Diagnostic } from '../../errors.js';

export type VarValue = unknown;

export interface InventoryHost {
  readonly name: string;
  /** Vars set on the host itself (host line, or the YAML host mapping). */
  readonly vars: Map<string, VarValue>;
  /** Line each host var was set on. */
  readonly varLines: Map<string, number>;
  /** Line the host first appears on. */
  readonly line: number;
}

export interface InventoryGroup {
  readonly name: string;
  readonly hosts: string[];
  readonly children: string[];
  readonly vars: Map<string, VarValue>;
  readonly varLines: Map<string, number>;
  /** Line the group is first named on (0 for the implicit `all` and `ungrouped`). */
  line: number;
}

export interface Inventory {
  readonly file: string;
  readonly format: 'ini' | 'yaml';
  /** In the order they first appear. */
  readonly hosts: Map<string, InventoryHost>;
  /** In the order they first appear; always holds `all` and `ungrouped`. */
  readonly groups: Map<string, InventoryGroup>;
}

export function emptyInventory(file: string, format: 'ini' | 'yaml'): Inventory {
  const inv: Inventory = { file, format, hosts: new Map(), groups: new Map() };
  ensureGroup(inv, 'all', 0);
  ensureGroup(inv, 'ungrouped', 0);
  return inv;
}

export function ensureGroup(inv: Inventory, name: string, line: number): InventoryGroup {
  let group = inv.groups.get(name);
  if (group === undefined) {
    group = { name, hosts: [], children: [], vars: new Map(), varLines: new Map(), line };
    inv.groups.set(name, group);
  }
  return group;
}

export function ensureHost(inv: Inventory, name: string, line: number): InventoryHost {
  let host = inv.hosts.get(name);
  if (host === undefined) {
    host = { name, vars: new Map(), varLines: new Map(), line };
    inv.hosts.set(name, host);
  }
  return host;
}

export function addMember(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}

/** Malformed inventory: exit 2, naming file:line. */
export function inventoryError(
  file: string,
  line: number,
  code: string,
  message: string,
  hint?: string,
): InvalidSpecError {
  const d: Diagnostic = {
    code,
    severity: 'error',
    path: file,
    message,
    location: `${file}:${line}`,
    ...(hint === undefined ? {} : { hint }),
  };
  return new InvalidSpecError(file, [d]);
}
