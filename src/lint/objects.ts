// Kubernetes objects in parsed documents: one per document, or one per item
// of a `kind: List` (what `kubectl get -o yaml` prints).
import type { Document } from 'yaml';
import type { ParsedFile } from './source.js';
import { asArray, asMap, asString, type JsonMap, type NodePath } from './values.js';

export interface ManifestObject {
  readonly file: ParsedFile;
  readonly doc: Document.Parsed;
  /** Where the object sits in its document: `[]`, or `['items', 3]` in a List. */
  readonly path: NodePath;
  readonly value: JsonMap;
  readonly kind: string;
  readonly name: string;
  /** As written; undefined when the manifest leaves it to `kubectl -n`. */
  readonly namespace: string | undefined;
}

export interface ObjectId {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export function objectId(object: ManifestObject): ObjectId {
  return object.namespace === undefined
    ? { kind: object.kind, name: object.name }
    : { kind: object.kind, name: object.name, namespace: object.namespace };
}

/** The namespace used to match Services with pods: unset means the same (default) namespace. */
export function namespaceKey(object: ManifestObject): string {
  return object.namespace ?? '';
}

export function objectsOf(file: ParsedFile): ManifestObject[] {
  const out: ManifestObject[] = [];
  for (const { doc, value: parsed } of file.documents) {
    // parseSource already turned the document into data, with the alias limit.
    const value = asMap(parsed);
    if (value !== undefined) collect(file, doc, [], value, out);
  }
  return out;
}

function collect(file: ParsedFile, doc: Document.Parsed, path: NodePath, value: JsonMap, out: ManifestObject[]): void {
  const kind = asString(value['kind']);
  if (kind === undefined) return;
  if (kind === 'List' || (kind.endsWith('List') && Array.isArray(value['items']))) {
    asArray(value['items']).forEach((item, i) => {
      const map = asMap(item);
      if (map !== undefined) collect(file, doc, [...path, 'items', i], map, out);
    });
    return;
  }
  const metadata = asMap(value['metadata']);
  const name = asString(metadata?.['name']) ?? asString(metadata?.['generateName']) ?? '(unnamed)';
  out.push({ file, doc, path, value, kind, name, namespace: asString(metadata?.['namespace']) });
}
