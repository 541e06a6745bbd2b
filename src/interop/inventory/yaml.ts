// Ansible YAML inventories, read the way Ansible's `yaml` inventory plugin
// reads them: top-level groups, each a mapping of `hosts`, `vars`,
// `children` (recursively groups). Values follow YAML 1.1 as PyYAML does
// (`yes` is true), so what we read equals what Ansible reads.
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node, type Pair } from 'yaml';
import { YAML_LIMITS } from '../../spec/yaml.js';
import { reconcile } from './reconcile.js';
import { expandHostPattern } from './ranges.js';
import { hostBudget, patternErrorCode, patternHint } from './limits.js';
import { addMember, emptyInventory, ensureGroup, ensureHost, inventoryError, type Inventory } from './types.js';

const SECTIONS = ['hosts', 'vars', 'children'] as const;

interface Ctx {
  readonly inv: Inventory;
  readonly lineOf: (node: Node | null | undefined) => number;
  readonly doc: Document;
}

export function parseYamlInventory(text: string, file: string): Inventory {
  if (Buffer.byteLength(text, 'utf8') > YAML_LIMITS.maxBytes)
    throw inventoryError(file, 1, 'yaml.too-large', `the file is larger than ${YAML_LIMITS.maxBytes} bytes`);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, version: '1.1', uniqueKeys: true, prettyErrors: false });
  const lineOf = (node: Node | null | undefined): number =>
    node?.range == null ? 1 : lines.linePos(node.range[0]).line;
  const first = doc.errors[0];
  if (first !== undefined)
    throw inventoryError(
      file,
      lines.linePos(first.pos[0]).line,
      'yaml.syntax',
      first.message.split('\n')[0] ?? 'invalid YAML',
    );
  const root = doc.contents;
  if (!isMap(root))
    throw inventoryError(
      file,
      lineOf(root as Node | null),
      'inventory.not-a-mapping',
      'a YAML inventory is a mapping of groups (usually `all:`)',
    );
  const ctx: Ctx = { inv: emptyInventory(file, 'yaml'), lineOf, doc };
  for (const pair of root.items) group(ctx, pair as Pair<Node, Node | null>, 0);
  reconcile(ctx.inv);
  return ctx.inv;
}

function keyText(ctx: Ctx, pair: Pair<Node, Node | null>): string {
  if (!isScalar(pair.key) || pair.key.value === null)
    throw inventoryError(ctx.inv.file, ctx.lineOf(pair.key), 'inventory.key', 'keys must be plain names');
  return String(pair.key.value);
}

function group(ctx: Ctx, pair: Pair<Node, Node | null>, depth: number): string {
  const name = keyText(ctx, pair);
  const line = ctx.lineOf(pair.key);
  if (depth > YAML_LIMITS.maxDepth)
    throw inventoryError(
      ctx.inv.file,
      line,
      'yaml.too-deep',
      `groups nested deeper than ${YAML_LIMITS.maxDepth} levels`,
    );
  const body = pair.value;
  if (body !== null && body !== undefined && !isMap(body) && !(isScalar(body) && body.value === null)) {
    throw inventoryError(
      ctx.inv.file,
      line,
      'inventory.group',
      `group ${name} must be a mapping of hosts, vars and children`,
    );
  }
  const g = ensureGroup(ctx.inv, name, line);
  if (g.line === 0 && name !== 'all' && name !== 'ungrouped') g.line = line;
  if (!isMap(body)) return name;
  for (const item of body.items as Pair<Node, Node | null>[]) {
    const section = keyText(ctx, item);
    const value = item.value;
    if (!(SECTIONS as readonly string[]).includes(section)) {
      throw inventoryError(
        ctx.inv.file,
        ctx.lineOf(item.key),
        'inventory.group-key',
        `unexpected key ${section} in group ${name}`,
        'only hosts, vars and children are valid',
      );
    }
    if (value === null || value === undefined || (isScalar(value) && value.value === null)) continue;
    if (isScalar(value) && section !== 'vars') {
      // Ansible accepts a single name in place of a mapping.
      const fake = { key: value, value: null } as unknown as Pair<Node, Node | null>;
      if (section === 'hosts') hosts(ctx, name, [fake]);
      else addMember(g.children, group(ctx, fake, depth + 1));
      continue;
    }
    if (!isMap(value))
      throw inventoryError(
        ctx.inv.file,
        ctx.lineOf(value),
        'inventory.section',
        `${section} of group ${name} must be a mapping`,
      );
    const items = value.items as Pair<Node, Node | null>[];
    if (section === 'hosts') hosts(ctx, name, items);
    else if (section === 'children') for (const child of items) addMember(g.children, group(ctx, child, depth + 1));
    else for (const v of items) setVar(ctx, g.vars, g.varLines, v);
  }
  return name;
}

function hosts(ctx: Ctx, groupName: string, items: Pair<Node, Node | null>[]): void {
  for (const item of items) {
    const pattern = keyText(ctx, item);
    const line = ctx.lineOf(item.key);
    let expanded;
    try {
      expanded = expandHostPattern(pattern, hostBudget(ctx.inv));
    } catch (error) {
      throw inventoryError(
        ctx.inv.file,
        line,
        patternErrorCode(error),
        `host pattern ${pattern}: ${(error as Error).message}`,
        patternHint(error),
      );
    }
    const body = item.value;
    if (body !== null && body !== undefined && !isMap(body) && !(isScalar(body) && body.value === null)) {
      throw inventoryError(ctx.inv.file, line, 'inventory.host', `host ${pattern} must map to its vars (or nothing)`);
    }
    for (const name of expanded.names) {
      const host = ensureHost(ctx.inv, name, line);
      addMember(ensureGroup(ctx.inv, groupName, line).hosts, name);
      if (expanded.port !== undefined) {
        host.vars.set('ansible_port', expanded.port);
        host.varLines.set('ansible_port', line);
      }
      if (isMap(body))
        for (const v of body.items as Pair<Node, Node | null>[]) setVar(ctx, host.vars, host.varLines, v);
    }
  }
}

function setVar(ctx: Ctx, vars: Map<string, unknown>, lines: Map<string, number>, pair: Pair<Node, Node | null>): void {
  const key = keyText(ctx, pair);
  let value: unknown = null;
  try {
    if (pair.value !== null && pair.value !== undefined)
      value = pair.value.toJS(ctx.doc, { maxAliasCount: YAML_LIMITS.maxAliases });
  } catch (error) {
    // The yaml library throws on an alias bomb ("Excessive alias count") and on an alias to no anchor.
    const hint = 'write the value out instead of building it from YAML aliases';
    throw inventoryError(
      ctx.inv.file,
      ctx.lineOf(pair.value),
      'yaml.aliases',
      `${key}: ${(error as Error).message}`,
      hint,
    );
  }
  vars.set(key, value);
  lines.set(key, ctx.lineOf(pair.key));
}
