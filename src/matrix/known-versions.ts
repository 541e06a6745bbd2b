// Which versions a spec or `upgrade --to` may name: written the one way
// upstream writes its releases (no leading zeros: `1.36.000` is not a tag on
// dl.k8s.io, and compared numerically it would pass for 1.36.0), and, with a
// patch, one the matrix knows — a patch past the matrix's pinned one has no
// kubeadm image list, checksums or support rows here, and a node asked to
// fetch `v1.36.99` fails half-way through a run. Newer patches come in by
// updating the matrix (src/matrix/index.ts).
import { CONTAINERD, KUBERNETES } from './index.js';

/** `1.36` or `1.36.2`: dot-separated numbers without leading zeros (upstream's release tags). */
export const CANONICAL_VERSION = /^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})(\.(0|[1-9][0-9]{0,3}))?$/;

export interface VersionProblem {
  /** `version.not-canonical` or `version.patch-unknown`. */
  readonly code: string;
  readonly message: string;
  readonly hint: string;
}

interface Row {
  /** `1.36`, `2.3` */
  readonly minor: string;
  /** The newest patch the matrix knows: `1.36.3`. */
  readonly patch: string;
}

const kubernetesRows = (): Row[] => KUBERNETES.map((k) => ({ minor: k.minor, patch: k.patch }));
const containerdRows = (): Row[] => CONTAINERD.map((c) => ({ minor: c.line, patch: c.patch }));

/** `1.34 (1.34.0–1.34.9), 1.35 (…)`: what may be written. */
export function knownVersionsText(rows: readonly Row[]): string {
  return rows.map((r) => `${r.minor} (${r.minor}.0–${r.patch})`).join(', ');
}

/**
 * Why `written` is not a version of `what` kubemix can deploy, or undefined. A minor the matrix does not
 * know is left to the caller, which words it for its own context (spec rule, upgrade skew).
 */
function problem(written: string, what: string, rows: readonly Row[]): VersionProblem | undefined {
  const known = `supported: ${knownVersionsText(rows)}`;
  if (!CANONICAL_VERSION.test(written))
    return {
      code: 'version.not-canonical',
      message: `${JSON.stringify(written)} is not a ${what} version as upstream writes them (MAJOR.MINOR or MAJOR.MINOR.PATCH, no leading zeros)`,
      hint: known,
    };
  const [major = '', minor = '', patch] = written.split('.');
  const row = rows.find((r) => r.minor === `${major}.${minor}`);
  if (row === undefined || patch === undefined) return undefined;
  if (Number(patch) <= Number(row.patch.split('.')[2])) return undefined;
  return {
    code: 'version.patch-unknown',
    message: `${what} ${written} is not a release kubemix knows: the newest ${row.minor} patch in its matrix is ${row.patch}`,
    hint: `write ${row.minor} (the matrix's ${row.patch}) or a patch up to it; ${known}`,
  };
}

export const kubernetesVersionProblem = (written: string): VersionProblem | undefined =>
  problem(written, 'Kubernetes', kubernetesRows());

export const containerdVersionProblem = (written: string): VersionProblem | undefined =>
  problem(written, 'containerd', containerdRows());
