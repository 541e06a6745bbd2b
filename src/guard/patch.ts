// lint's placement fix as an RFC 6902 JSON Patch against the admitted object:
// only `add` operations, each on a member that does not exist yet, so nothing
// the user wrote is changed or reordered.
import { WINDOWS_TAINT } from '../lint/cluster.js';
import type { PlacementFix } from '../lint/suggest.js';
import { asMap, type JsonMap, type NodePath } from '../lint/values.js';

export interface AddOp {
  readonly op: 'add';
  readonly path: string;
  readonly value: unknown;
}

/** RFC 6901: `~` → `~0`, `/` → `~1` (kubernetes.io/os is one key, not two). */
export function pointer(path: NodePath): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

export function placementPatch(spec: JsonMap, specPath: NodePath, fix: PlacementFix): AddOp[] {
  const ops: AddOp[] = [];
  const at = (...rest: (string | number)[]): string => pointer([...specPath, ...rest]);
  if (fix.osName) {
    ops.push(
      asMap(spec['os']) === undefined
        ? { op: 'add', path: at('os'), value: { name: fix.os } }
        : { op: 'add', path: at('os', 'name'), value: fix.os },
    );
  }
  if (fix.runtimeClass !== undefined) ops.push({ op: 'add', path: at('runtimeClassName'), value: fix.runtimeClass });
  if (fix.nodeSelector) {
    ops.push(
      asMap(spec['nodeSelector']) === undefined
        ? { op: 'add', path: at('nodeSelector'), value: { 'kubernetes.io/os': fix.os } }
        : { op: 'add', path: at('nodeSelector', 'kubernetes.io/os'), value: fix.os },
    );
  }
  if (fix.toleration) {
    const toleration = {
      key: WINDOWS_TAINT.key,
      operator: 'Equal',
      value: WINDOWS_TAINT.value,
      effect: WINDOWS_TAINT.effect,
    };
    ops.push(
      Array.isArray(spec['tolerations'])
        ? { op: 'add', path: at('tolerations', '-'), value: toleration }
        : { op: 'add', path: at('tolerations'), value: [toleration] },
    );
  }
  return ops;
}
