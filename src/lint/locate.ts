// From a path inside a document to a line and column, for findings. Paths
// that do not exist (a field the rule wants added) resolve to the deepest
// existing key on the way, which is where the user has to add it.
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import type { NodePath } from './values.js';

export interface Position {
  readonly line: number;
  readonly column: number;
}

export function locate(doc: Document.Parsed, path: NodePath, lineCounter: LineCounter): Position {
  let node: unknown = doc.contents;
  // A document built from an already-parsed object has no ranges: offset 0.
  let offset =
    (doc.contents as Node | null)?.range?.[0] ?? (doc.range as Document.Parsed['range'] | undefined)?.[0] ?? 0;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      const keyRange = pair !== undefined && isScalar(pair.key) ? pair.key.range : undefined;
      if (pair === undefined || keyRange == null) break;
      offset = keyRange[0];
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      const range = (item as Node | undefined)?.range;
      if (range == null) break;
      offset = range[0];
      node = item;
    } else {
      break;
    }
  }
  const pos = lineCounter.linePos(offset);
  return { line: pos.line, column: pos.col };
}
