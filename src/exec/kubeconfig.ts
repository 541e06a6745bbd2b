// The admin kubeconfig kubeadm wrote on the first controller (captured into
// the secret store), renamed after the cluster and, on request, merged into a
// user's kubeconfig without disturbing anything else in it.
import { isDeepStrictEqual } from 'node:util';
import { Document, isMap, isSeq, parse, parseDocument, stringify } from 'yaml';
import { InputError } from '../errors.js';

interface Named {
  readonly name: string;
  readonly [key: string]: unknown;
}

interface KubeconfigDoc {
  apiVersion?: string;
  kind?: string;
  clusters?: Named[];
  users?: Named[];
  contexts?: Named[];
  'current-context'?: string;
  [key: string]: unknown;
}

function parseKubeconfig(text: string, where: string): KubeconfigDoc {
  let doc: unknown;
  try {
    doc = text.trim() === '' ? {} : parse(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new InputError(
      'kubeconfig.invalid',
      `${where} is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      { path: where },
    );
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new InputError('kubeconfig.invalid', `${where} is not a kubeconfig mapping`, { path: where });
  return doc as KubeconfigDoc;
}

/** kubeadm's admin.conf with its cluster, user and context all named after our cluster. */
export function renameAdminKubeconfig(adminConf: string, cluster: string): string {
  const doc = parseKubeconfig(adminConf, 'admin.conf');
  const cl = doc.clusters?.[0];
  const us = doc.users?.[0];
  if (cl === undefined || us === undefined)
    throw new InputError('kubeconfig.invalid', 'admin.conf holds no cluster or user');
  const user = `${cluster}-admin`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ ...cl, name: cluster }],
    users: [{ ...us, name: user }],
    contexts: [{ name: cluster, context: { cluster, user } }],
    'current-context': cluster,
  });
}

/** What merging changed, and the entries of the same name it found holding something else. */
export interface MergeResult {
  readonly text: string;
  /** `clusters/NAME`, `users/NAME`, `contexts/NAME` already in the file with other content. */
  readonly clashes: readonly string[];
}

const SECTIONS = ['clusters', 'users', 'contexts'] as const;

/**
 * `ours` (from renameAdminKubeconfig) merged into `theirs`, edited in place
 * through the YAML document so every comment, key order and entry of theirs
 * stays. An entry of the same name with the same content is left as it is;
 * one with other content is a clash: replaced only when `replace`, else
 * reported (and the text unchanged).
 */
export function mergeKubeconfig(
  theirs: string,
  ours: string,
  where: string,
  options: { readonly useContext: boolean; readonly replace: boolean },
): MergeResult {
  parseKubeconfig(theirs, where);
  const doc = theirs.trim() === '' ? new Document({ apiVersion: 'v1', kind: 'Config' }) : parseDocument(theirs);
  const add = parseKubeconfig(ours, 'admin kubeconfig');
  const clashes: string[] = [];
  for (const key of SECTIONS) {
    for (const entry of add[key] ?? []) {
      const list = doc.get(key, true);
      const items = isSeq(list) ? list.items : [];
      const at = items.findIndex((item) => isMap(item) && item.get('name') === entry.name);
      if (at < 0) {
        if (isSeq(list)) list.items.push(doc.createNode(entry));
        else doc.set(key, doc.createNode([entry]));
      } else if (!isDeepStrictEqual(toJs(items[at]), entry)) {
        clashes.push(`${key}/${entry.name}`);
        if (options.replace && isSeq(list)) list.items[at] = doc.createNode(entry);
      }
    }
  }
  if (clashes.length > 0 && !options.replace) return { text: theirs, clashes };
  if (options.useContext || !doc.has('current-context')) doc.set('current-context', add['current-context']);
  return { text: doc.toString(), clashes };
}

function toJs(node: unknown): unknown {
  return isMap(node) ? node.toJSON() : node;
}
