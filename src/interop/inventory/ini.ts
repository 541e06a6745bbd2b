// Ansible INI inventories, read the way Ansible's `ini` inventory plugin reads
// them: `[group]` host lines, `[group:vars]` key=value lines (the value is the
// rest of the line, inline `#` included, as Ansible does), `[group:children]`,
// `;`/`#` comment lines, groups declared later than they are used.
import { expandHostPattern } from './ranges.js';
import { hostBudget, patternErrorCode, patternHint } from './limits.js';
import { addMember, emptyInventory, ensureGroup, ensureHost, inventoryError, type Inventory } from './types.js';
import { parseValue, shlexSplit } from './value.js';
import { reconcile } from './reconcile.js';

const SECTION = /^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$/;
const GROUP_NAME = /^([^:\]\s]+)\s*(?:#.*)?$/;

type State = 'hosts' | 'vars' | 'children';

interface Pending {
  readonly line: number;
  readonly state: 'vars' | 'children';
  readonly parents: string[];
}

export function parseIniInventory(text: string, file: string): Inventory {
  const inv = emptyInventory(file, 'ini');
  const pending = new Map<string, Pending>();
  let group = 'ungrouped';
  let state: State = 'hosts';
  const fail = (line: number, code: string, message: string, hint?: string) =>
    inventoryError(file, line, code, message, hint);
  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNo = index + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const section = SECTION.exec(line);
    if (section !== null) {
      group = section[1] as string;
      const kind = section[2] ?? 'hosts';
      if (kind !== 'hosts' && kind !== 'vars' && kind !== 'children') {
        throw fail(
          lineNo,
          'inventory.section',
          `section [${group}:${kind}] has unknown type ${kind}`,
          'use [group], [group:vars] or [group:children]',
        );
      }
      state = kind;
      declareGroup(inv, pending, group, state, lineNo);
      return;
    }
    if (line.startsWith('[') && line.endsWith(']')) {
      throw fail(
        lineNo,
        'inventory.section',
        `invalid section entry ${line}`,
        'no spaces or other invalid characters in a section name',
      );
    }
    if (state === 'hosts') hostLine(inv, group, line, lineNo, fail);
    else if (state === 'vars') varLine(inv, group, line, lineNo, fail);
    else childLine(inv, pending, group, line, lineNo, fail);
  });
  for (const [name, decl] of pending) {
    if (decl.state === 'vars')
      throw fail(decl.line, 'inventory.undefined-group', `section [${name}:vars] is for a group that is never defined`);
    throw fail(
      decl.line,
      'inventory.undefined-group',
      `section [${decl.parents.at(-1) ?? ''}:children] includes undefined group ${name}`,
      `add a [${name}] section`,
    );
  }
  reconcile(inv);
  return inv;
}

type Fail = (line: number, code: string, message: string, hint?: string) => Error;

/** `[g]` or `[g:children]` declares a group; `[g:vars]` alone does not (Ansible requires it declared somewhere). */
function declareGroup(inv: Inventory, pending: Map<string, Pending>, name: string, state: State, line: number): void {
  if (!inv.groups.has(name)) {
    if (state === 'vars' && !pending.has(name)) pending.set(name, { line, state, parents: [] });
    ensureGroup(inv, name, line);
  }
  const decl = pending.get(name);
  if (decl === undefined || state === 'vars') return;
  if (decl.state === 'children')
    for (const parent of decl.parents) addMember(ensureGroup(inv, parent, line).children, name);
  pending.delete(name);
}

function hostLine(inv: Inventory, group: string, line: string, lineNo: number, fail: Fail): void {
  let tokens: string[];
  try {
    tokens = shlexSplit(line);
  } catch (error) {
    throw fail(lineNo, 'inventory.host', `cannot parse host line: ${(error as Error).message}`, 'close the quote');
  }
  const [pattern, ...assignments] = tokens;
  if (pattern === undefined) return;
  let expanded;
  try {
    expanded = expandHostPattern(pattern, hostBudget(inv));
  } catch (error) {
    throw fail(
      lineNo,
      patternErrorCode(error),
      `host pattern ${pattern}: ${(error as Error).message}`,
      patternHint(error),
    );
  }
  const vars: [string, unknown][] = [];
  for (const a of assignments) {
    const eq = a.indexOf('=');
    if (eq <= 0)
      throw fail(
        lineNo,
        'inventory.host-var',
        `expected key=value after the host name, got ${a}`,
        'quote values that contain spaces',
      );
    vars.push([a.slice(0, eq), parseValue(a.slice(eq + 1))]);
  }
  if (expanded.port !== undefined) vars.unshift(['ansible_port', expanded.port]);
  for (const name of expanded.names) {
    const host = ensureHost(inv, name, lineNo);
    addMember(ensureGroup(inv, group, lineNo).hosts, name);
    for (const [k, v] of vars) {
      host.vars.set(k, v);
      host.varLines.set(k, lineNo);
    }
  }
}

function varLine(inv: Inventory, group: string, line: string, lineNo: number, fail: Fail): void {
  const eq = line.indexOf('=');
  if (eq < 0) throw fail(lineNo, 'inventory.group-var', `expected key=value, got ${line}`);
  const g = ensureGroup(inv, group, lineNo);
  const key = line.slice(0, eq).trim();
  g.vars.set(key, parseValue(line.slice(eq + 1).trim()));
  g.varLines.set(key, lineNo);
}

function childLine(
  inv: Inventory,
  pending: Map<string, Pending>,
  group: string,
  line: string,
  lineNo: number,
  fail: Fail,
): void {
  const child = GROUP_NAME.exec(line)?.[1];
  if (child === undefined) throw fail(lineNo, 'inventory.group-name', `invalid group name ${line}`);
  if (inv.groups.has(child)) {
    addMember(ensureGroup(inv, group, lineNo).children, child);
    return;
  }
  const decl = pending.get(child);
  if (decl === undefined) pending.set(child, { line: lineNo, state: 'children', parents: [group] });
  else decl.parents.push(group);
}
