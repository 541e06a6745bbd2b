// A step of a Windows worker's recipe: what the plan turns into one task.
import type { Stage } from '../../plan/types.js';

export interface WindowsStep {
  readonly stage: Stage;
  readonly name: string;
  readonly description: string;
  /** PowerShell that exits 0 when the step is already done; null: always apply. */
  readonly check: string | null;
  readonly apply: string;
  /** Remote paths of artifacts the step needs on the host first. */
  readonly uploads: readonly string[];
  readonly secrets: readonly string[];
  readonly timeoutSeconds: number;
  /** The host reboots during apply; the executor waits for it to come back. */
  readonly reboots?: true;
}

/** A check script: exit 0 when `condition` holds. */
export function checkThat(condition: string): string {
  return `if (${condition}) { exit 0 }\nexit 1\n`;
}
