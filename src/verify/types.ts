// What every verify layer reports: one cell of a matrix (a probe from a
// source to a target) with its outcome. Pure data, JSON-serialisable.

export type Layer = 'underlay' | 'cluster';
/** `warn`: it works, and will not for long (a credential about to expire); warnings do not fail verify. */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  /** `<layer>/<probe>/<source>/<target>`: what --only and --skip match. */
  readonly id: string;
  readonly layer: Layer;
  readonly probe: string;
  readonly source: string;
  readonly target: string;
  readonly status: CheckStatus;
  /** One line: what was seen (pass), what will go wrong (warn), what went wrong (fail) or why it did not run (skip). */
  readonly detail: string;
  /** The command that ran on the source (failures and warnings only). */
  readonly command?: string;
  /** Its output, trimmed (failures only). */
  readonly output?: string;
  /** The likely cause where one is known, or what to do (failures and warnings only). */
  readonly cause?: string;
}

export function checkId(layer: Layer, probe: string, source: string, target: string): string {
  return `${layer}/${probe}/${source}/${target}`;
}
