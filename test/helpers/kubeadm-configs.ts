// The kubeadm configurations a plan ships, as files kubeadm can read: the
// Linux init and join configurations (/etc/kubemix/kubeadm/), the Windows
// JoinConfiguration and its kubelet patch, with their `{{secret:…}}`
// references filled the way the executor fills them (values of the same
// form: a bootstrap token, a 32-byte certificate key, a CA hash).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateSecret } from '../../src/exec/secrets.js';
import { SECRET_NAMES } from '../../src/model/secret-names.js';
import type { AssembledPlan } from '../../src/plan/assemble.js';
import { KUBEADM_DIR } from '../../src/render/kubeadm/config.js';
import { KUBEADM_PATCHES_DIR } from '../../src/render/kubeadm/patches.js';
import { WIN } from '../../src/render/windows/paths.js';

export type Obj = Record<string, any>;

export interface KubeadmConfigFile {
  readonly node: string;
  readonly kind: 'init' | 'join' | 'windows-join';
  /** Where the plan puts it on the node. */
  readonly remotePath: string;
  /** The file as uploaded, secrets filled. */
  readonly text: string;
  readonly docs: Obj[];
}

export const FILLED: Readonly<Record<string, string>> = {
  [SECRET_NAMES.kubeadmToken]: generateSecret(SECRET_NAMES.kubeadmToken)!,
  [SECRET_NAMES.kubeadmCertificateKey]: generateSecret(SECRET_NAMES.kubeadmCertificateKey)!,
  [SECRET_NAMES.clusterCaCertHash]: `sha256:${randomBytes(32).toString('hex')}`,
};

export function fillSecrets(text: string): string {
  return text.replace(/\{\{secret:([A-Za-z0-9_.-]+)\}\}/g, (_, name: string) => {
    const value = FILLED[name];
    if (value === undefined) throw new Error(`no test value for secret ${name}`);
    return value;
  });
}

export const docsOf = (text: string): Obj[] => parseAllDocuments(text).map((d) => d.toJS() as Obj);

export function kubeadmConfigs(p: AssembledPlan): KubeadmConfigFile[] {
  return p.files.flatMap((f): KubeadmConfigFile[] => {
    const kind = f.remotePath.startsWith(`${KUBEADM_PATCHES_DIR}/`)
      ? undefined
      : f.remotePath.startsWith(`${KUBEADM_DIR}/`)
        ? f.remotePath.endsWith('/init.yaml')
          ? 'init'
          : 'join'
        : f.remotePath === WIN.joinConfig
          ? 'windows-join'
          : undefined;
    if (kind === undefined) return [];
    const text = fillSecrets(f.content);
    return [{ node: f.node, kind, remotePath: f.remotePath, text, docs: docsOf(text) }];
  });
}

/** The Windows kubelet patch files of a node (kubeadm's --patches directory), by file name. */
export function windowsPatches(p: AssembledPlan, node: string): Map<string, string> {
  const prefix = `${WIN.patchesDir}\\`;
  return new Map(
    p.files
      .filter((f) => f.node === node && f.remotePath.startsWith(prefix))
      .map((f) => [f.remotePath.slice(prefix.length), f.content]),
  );
}

/** A Linux control plane's probe patches (spec.kubernetes.controlPlaneProbes), by file name. */
export function probePatches(p: AssembledPlan, node: string): Map<string, string> {
  const prefix = `${KUBEADM_PATCHES_DIR}/`;
  return new Map(
    p.files
      .filter((f) => f.node === node && f.remotePath.startsWith(prefix))
      .map((f) => [f.remotePath.slice(prefix.length), f.content]),
  );
}

/** Writes files into `dir` (made if missing); returns the paths. */
export function writeAll(dir: string, files: ReadonlyMap<string, string>): string[] {
  mkdirSync(dir, { recursive: true });
  return [...files].map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  });
}

/** The `--name=value` arguments of a static Pod manifest's first container, as a map. */
export function staticPodFlags(manifest: string): Map<string, string> {
  const pod = docsOf(manifest)[0] as Obj;
  const command = (pod['spec']?.['containers']?.[0]?.['command'] ?? []) as string[];
  return new Map(
    command
      .filter((a) => a.startsWith('--'))
      .map((a) => {
        const eq = a.indexOf('=');
        return eq < 0 ? [a.slice(2), ''] : [a.slice(2, eq), a.slice(eq + 1)];
      }),
  );
}

/** A Go duration (`5m0s`, `24h0m0s`, `90s`) in milliseconds; undefined when it is not one. */
export function goDuration(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^(\d+(\.\d+)?(h|m|s|ms))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) total += Number(m[1]) * (unit[m[2] ?? ''] ?? 0);
  return total;
}

/**
 * Every leaf of `want` that `got` does not hold with the same value (durations
 * compared as durations, lists element by element): what kubeadm did not read
 * as written.
 */
export function notCarried(want: unknown, got: unknown, path = ''): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length)
      return [`${path}: ${JSON.stringify(want)} became ${JSON.stringify(got)}`];
    return want.flatMap((w, i) => notCarried(w, got[i], `${path}[${i}]`));
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object') return [`${path}: became ${JSON.stringify(got)}`];
    return Object.entries(want as Obj).flatMap(([k, v]) =>
      notCarried(v, (got as Obj)[k], path === '' ? k : `${path}.${k}`),
    );
  }
  const wd = goDuration(want);
  if (wd !== undefined && wd === goDuration(got)) return [];
  return want === got ? [] : [`${path}: ${JSON.stringify(want)} became ${JSON.stringify(got)}`];
}
