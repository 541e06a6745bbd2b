// What a fixed file must satisfy before it is written, beyond "it parses and
// lint has nothing left to fix": the fields the fixer writes have the shape
// the Kubernetes API gives them (core/v1 PodOS, Toleration, PodSpec
// nodeSelector and runtimeClassName), so an insertion that landed in the
// wrong map (a selector label inside `os`) is caught even where the YAML
// still parses. The API server rejects an unknown field under strict field
// validation (kubectl's default, `--validate=strict`) and drops it otherwise.
import { asMap, type JsonMap } from './values.js';

/** core/v1 PodOS has one field. */
const POD_OS_FIELDS = new Set(['name']);
/** core/v1 Toleration. */
const TOLERATION_FIELDS = new Set(['key', 'operator', 'value', 'effect', 'tolerationSeconds']);

/** Problems with the placement fields of one pod spec, as `field: what` strings. */
export function placementShapeErrors(spec: JsonMap): string[] {
  const errors: string[] = [];
  if (spec['os'] !== undefined && spec['os'] !== null) {
    const os = asMap(spec['os']);
    if (os === undefined) errors.push('os: not a map');
    for (const key of Object.keys(os ?? {})) if (!POD_OS_FIELDS.has(key)) errors.push(`os.${key}: not a PodOS field`);
    if (os?.['name'] !== undefined && os['name'] !== 'linux' && os['name'] !== 'windows')
      errors.push('os.name: not linux or windows');
  }
  if (spec['nodeSelector'] !== undefined && spec['nodeSelector'] !== null) {
    const selector = asMap(spec['nodeSelector']);
    if (selector === undefined) errors.push('nodeSelector: not a map');
    for (const [key, value] of Object.entries(selector ?? {}))
      if (typeof value !== 'string') errors.push(`nodeSelector.${key}: not a string`);
  }
  if (spec['runtimeClassName'] !== undefined && typeof spec['runtimeClassName'] !== 'string')
    errors.push('runtimeClassName: not a string');
  const tolerations = spec['tolerations'];
  if (tolerations !== undefined && tolerations !== null) {
    if (!Array.isArray(tolerations)) errors.push('tolerations: not a list');
    else tolerations.forEach((item, i) => errors.push(...tolerationErrors(item, i)));
  }
  return errors;
}

function tolerationErrors(item: unknown, index: number): string[] {
  const map = asMap(item);
  if (map === undefined) return [`tolerations[${index}]: not a map`];
  return Object.keys(map)
    .filter((k) => !TOLERATION_FIELDS.has(k))
    .map((k) => `tolerations[${index}].${k}: not a Toleration field`);
}

/** Shape errors the fix added: those of `after` that `before` (the same template unfixed) did not have. */
export function newShapeErrors(before: JsonMap | undefined, after: JsonMap): string[] {
  const old = new Set(before === undefined ? [] : placementShapeErrors(before));
  return placementShapeErrors(after).filter((e) => !old.has(e));
}
