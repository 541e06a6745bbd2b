// The admin kubeconfig kubeadm wrote on the first controller (captured into
// the secret store), renamed after the cluster and, on request, merged into a
// user's kubeconfig without disturbing anything else in it.
import { parse, stringify } from 'yaml';
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

/** `ours` (from renameAdminKubeconfig) merged into `theirs`: same-named entries replaced, the rest kept. */
export function mergeKubeconfig(theirs: string, ours: string, where: string, useContext: boolean): string {
  const base = parseKubeconfig(theirs, where);
  const add = parseKubeconfig(ours, 'admin kubeconfig');
  const merge = (key: 'clusters' | 'users' | 'contexts'): Named[] => {
    const incoming = add[key] ?? [];
    const names = new Set(incoming.map((e) => e.name));
    return [...(base[key] ?? []).filter((e) => !names.has(e.name)), ...incoming];
  };
  const current =
    useContext || base['current-context'] === undefined ? add['current-context'] : base['current-context'];
  return stringify({
    ...base,
    apiVersion: base.apiVersion ?? 'v1',
    kind: base.kind ?? 'Config',
    clusters: merge('clusters'),
    users: merge('users'),
    contexts: merge('contexts'),
    ...(current === undefined ? {} : { 'current-context': current }),
  });
}
