// Minimal text edits to a YAML file, positioned with the yaml library's
// document nodes: new keys go after the last entry of a map, new items after
// the last item of a sequence, written in the style the file already uses
// (indentation, block or flow, JSON). Everything else in the file stays byte
// for byte: comments, key order, quoting, blank lines.
import { isMap, isSeq, type Document, type Node, type YAMLMap, type YAMLSeq } from 'yaml';
import type { NodePath } from './values.js';

export type EditValue = string | { readonly [key: string]: EditValue } | readonly EditValue[];

export interface Insertion {
  readonly offset: number;
  readonly text: string;
  /**
   * How deep the inserted lines nest: their column, plus a half for a block
   * sequence item (its dash may sit at its key's column). Several insertions
   * at one offset are written deepest first, so an entry for an inner map
   * that ends there stays in that map instead of landing under an outer entry
   * inserted before it.
   */
  readonly depth: number;
}

/** How the file writes things, so insertions look like the rest. */
export interface Style {
  /** Spaces per nesting level in block maps. */
  readonly unit: number;
  /** Block sequence dashes indented under their key (`key:\n  - a`) or not (`key:\n- a`). */
  readonly indentSeq: boolean;
  /** Flow collections written as JSON (a .json manifest). */
  readonly json: boolean;
}

export function detectStyle(text: string, json: boolean): Style {
  const indents = [...text.matchAll(/^( +)\S/gm)].map((m) => (m[1] ?? '').length).filter((n) => n > 0);
  const unit = indents.length === 0 ? 2 : Math.min(...indents);
  const seqLines = [...text.matchAll(/^( *)[\w"'./-]+:[ \t]*(?:#.*)?\n( *)- /gm)];
  const indentSeq =
    seqLines.length === 0 ||
    seqLines.filter((m) => (m[2] ?? '').length > (m[1] ?? '').length).length * 2 >= seqLines.length;
  return { unit: Math.min(unit, 8), indentSeq, json };
}

/** The map or sequence node at a path, if it is one. */
export function collectionAt(doc: Document.Parsed, path: NodePath): YAMLMap | YAMLSeq | undefined {
  const node: unknown = path.length === 0 ? doc.contents : doc.getIn(path, true);
  return isMap(node) || isSeq(node) ? node : undefined;
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

/** Offset of the start of the line after `offset`'s line (or `offset` when already at a line start). */
function nextLineStart(text: string, offset: number): number {
  if (offset > 0 && text[offset - 1] === '\n') return offset;
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}

function nodeEnd(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range == null ? undefined : range[1];
}

/**
 * Where the last content of a block node ends: the end of its last scalar or
 * flow collection. A block collection's own range runs on over trailing blank
 * lines, and a new entry belongs before those.
 */
function contentEnd(node: unknown): number | undefined {
  if ((isMap(node) || isSeq(node)) && node.flow !== true) {
    const last: unknown = node.items[node.items.length - 1];
    if (last === undefined) return nodeEnd(node);
    if (isMap(node)) {
      const pair = node.items[node.items.length - 1];
      return contentEnd(pair?.value ?? pair?.key);
    }
    return contentEnd(last);
  }
  return nodeEnd(node);
}

/** Written unquoted: starts with a letter, so never a number, and no YAML indicators. */
const PLAIN = /^[A-Za-z][A-Za-z0-9._/-]*$/;
const YAML11_WORDS = /^(y|n|yes|no|on|off|true|false|null)$/i;

function scalar(value: string, style: Style): string {
  return !style.json && PLAIN.test(value) && !YAML11_WORDS.test(value) ? value : JSON.stringify(value);
}

function flow(value: EditValue, style: Style): string {
  if (typeof value === 'string') return scalar(value, style);
  if (Array.isArray(value)) return `[${(value as readonly EditValue[]).map((v) => flow(v, style)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, EditValue>).map(
    ([k, v]) => `${scalar(k, style)}: ${flow(v, style)}`,
  );
  return `{${entries.join(', ')}}`;
}

/** `key: value` as block lines at `indent`. */
function blockEntry(key: string, value: EditValue, indent: number, style: Style): string {
  const pad = ' '.repeat(indent);
  if (typeof value === 'string') return `${pad}${scalar(key, style)}: ${scalar(value, style)}\n`;
  if (Array.isArray(value)) {
    const dash = indent + (style.indentSeq ? style.unit : 0);
    return `${pad}${scalar(key, style)}:\n${(value as readonly EditValue[]).map((item) => blockItem(item, dash, style)).join('')}`;
  }
  const inner = Object.entries(value as Record<string, EditValue>).map(([k, v]) =>
    blockEntry(k, v, indent + style.unit, style),
  );
  return `${pad}${scalar(key, style)}:\n${inner.join('')}`;
}

/** `- item` as block lines with the dash at `indent`. */
function blockItem(item: EditValue, indent: number, style: Style): string {
  if (typeof item === 'string' || Array.isArray(item)) return `${' '.repeat(indent)}- ${flow(item, style)}\n`;
  const lines = Object.entries(item as Record<string, EditValue>).map(([k, v]) => blockEntry(k, v, indent + 2, style));
  return lines.map((l, i) => (i === 0 ? `${' '.repeat(indent)}- ${l.trimStart()}` : l)).join('');
}

/** Insert `key: value` as the last entry of a map. */
export function insertEntry(
  text: string,
  map: YAMLMap,
  key: string,
  value: EditValue,
  style: Style,
): Insertion | undefined {
  if (map.flow === true) return insertFlow(text, map, `${scalar(key, style)}: ${flow(value, style)}`, '}');
  const first = map.items[0]?.key;
  const last = map.items[map.items.length - 1];
  const firstStart = (first as Node | null | undefined)?.range?.[0];
  const end = contentEnd(last?.value) ?? contentEnd(last?.key);
  if (firstStart === undefined || end === undefined) return undefined;
  const offset = nextLineStart(text, end);
  const prefix = offset === text.length && !text.endsWith('\n') ? '\n' : '';
  const column = columnOf(text, firstStart);
  return { offset, text: prefix + blockEntry(key, value, column, style), depth: column };
}

/** Insert an item as the last of a sequence. */
export function appendItem(text: string, seq: YAMLSeq, item: EditValue, style: Style): Insertion | undefined {
  if (seq.flow === true) return insertFlow(text, seq, flow(item, style), ']');
  const start = seq.range?.[0];
  const end = contentEnd(seq.items[seq.items.length - 1]);
  if (start === undefined || end === undefined) return undefined;
  const offset = nextLineStart(text, end);
  const prefix = offset === text.length && !text.endsWith('\n') ? '\n' : '';
  const column = columnOf(text, start);
  return { offset, text: prefix + blockItem(item, column, style), depth: column + 0.5 };
}

function insertFlow(text: string, node: YAMLMap | YAMLSeq, entry: string, close: '}' | ']'): Insertion | undefined {
  const end = node.range?.[1];
  if (end === undefined) return undefined;
  const closeAt = text.lastIndexOf(close, end - 1);
  const open = node.range?.[0];
  if (closeAt < 0 || open === undefined || closeAt < open) return undefined;
  const last = lastFlowItem(node);
  const lastEnd = nodeEnd(last?.end);
  const lastStart = (last?.start as Node | null | undefined)?.range?.[0];
  // Inside a flow collection nesting is by brackets, not columns: depth is moot.
  if (lastEnd === undefined || lastStart === undefined) return { offset: closeAt, text: entry, depth: 0 };
  // Pretty-printed JSON keeps one entry per line: so does the new one.
  const multiline = text.slice(lastEnd, closeAt).includes('\n');
  return {
    offset: lastEnd,
    text: multiline ? `,\n${' '.repeat(columnOf(text, lastStart))}${entry}` : `, ${entry}`,
    depth: 0,
  };
}

function lastFlowItem(node: YAMLMap | YAMLSeq): { start: unknown; end: unknown } | undefined {
  if (isMap(node)) {
    const pair = node.items[node.items.length - 1];
    return pair === undefined ? undefined : { start: pair.key, end: pair.value ?? pair.key };
  }
  const item: unknown = node.items[node.items.length - 1];
  return item === undefined ? undefined : { start: item, end: item };
}

/** Apply insertions; several at one offset go deepest first, equal depths in their given order. */
export function applyInsertions(text: string, insertions: readonly Insertion[]): string {
  const byOffset = new Map<number, Insertion[]>();
  for (const ins of insertions) byOffset.set(ins.offset, [...(byOffset.get(ins.offset) ?? []), ins]);
  let out = text;
  for (const [offset, group] of [...byOffset.entries()].sort((a, b) => b[0] - a[0])) {
    // Array.prototype.sort is stable: equal depths keep their order.
    const texts = [...group].sort((a, b) => b.depth - a.depth).map((i) => i.text);
    // At the end of a file without a final newline each block insertion starts with one; the first is enough.
    const joined = texts
      .map((t, i) => (i > 0 && t.startsWith('\n') && texts[i - 1]?.endsWith('\n') === true ? t.slice(1) : t))
      .join('');
    out = out.slice(0, offset) + joined + out.slice(offset);
  }
  return out;
}
