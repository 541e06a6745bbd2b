// The bounds an inventory is read within, checked before the work they bound:
// the file's size before parsing, a host pattern's expansion before any name
// is made (ranges.ts), the generated spec's size before it is written.
import { YAML_LIMITS } from '../../spec/yaml.js';
import { MAX_INVENTORY_HOSTS, TooManyHostsError } from './ranges.js';
import { inventoryError, type Inventory } from './types.js';

/** The same bound as a spec file: an inventory of MAX_INVENTORY_HOSTS hosts is far smaller. */
export const MAX_INVENTORY_BYTES = YAML_LIMITS.maxBytes;

export function checkInventorySize(text: string, file: string): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_INVENTORY_BYTES) {
    const hint = 'check the path: an inventory of a cluster is a few kilobytes';
    throw inventoryError(
      file,
      1,
      'inventory.too-large',
      `the inventory is ${bytes} bytes, more than ${MAX_INVENTORY_BYTES}`,
      hint,
    );
  }
}

/** How many more hosts the inventory may name. */
export function hostBudget(inv: Inventory): number {
  return Math.max(0, MAX_INVENTORY_HOSTS - inv.hosts.size);
}

export function patternErrorCode(error: unknown): string {
  return error instanceof TooManyHostsError ? 'inventory.too-many-hosts' : 'inventory.host-pattern';
}

export function patternHint(error: unknown): string | undefined {
  if (!(error instanceof TooManyHostsError)) return undefined;
  return `an inventory names at most ${MAX_INVENTORY_HOSTS} hosts; list the cluster's hosts with smaller ranges`;
}
