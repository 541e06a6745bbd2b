// The scripts of one step of a Windows worker's recipe. render/ writes the
// PowerShell; plan/tasks/windows-recipe.ts decides the step's stage, order,
// dependencies, uploads, secrets and timeout.

export interface WindowsScripts {
  /** PowerShell that exits 0 when the step is already done; null: always apply. */
  readonly check: string | null;
  readonly apply: string;
}

/** A check script: exit 0 when `condition` holds. */
export function checkThat(condition: string): string {
  return `if (${condition}) { exit 0 }\nexit 1\n`;
}
