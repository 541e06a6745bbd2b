// What a layer-2 run is given: the API access, the abort signal, layer 1's
// results (to explain failures), the selection, and the timings (shorter in
// tests).
import type { KubeAccess } from '../../kube/config.js';
import type { CheckResult } from '../types.js';

export interface RunClusterOptions {
  readonly access: KubeAccess;
  readonly signal: AbortSignal;
  readonly underlay: readonly CheckResult[];
  /** Which cells run (--only/--skip over check ids). */
  readonly select: (id: string) => boolean;
  /** `HOST:PORT` targets outside the cluster every probe pod connects to (--egress); none by default. */
  readonly egress?: readonly string[];
  /** How long probe pods may take to start (default: the expectations' podStartMs), and the whole matrix to finish. */
  readonly startMs?: number;
  readonly matrixMs?: number;
  /** How long an earlier run's namespace may take to go away. */
  readonly goneMs?: number;
  /** Pause between NodePort tries, and before listing again after a failed watch. */
  readonly pollMs?: number;
  readonly onProgress?: (message: string) => void;
}
