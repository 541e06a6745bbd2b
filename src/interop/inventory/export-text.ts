// The text `kubemix inventory export` prints: the inventory of a model in INI
// or YAML, headed by where it came from.
import type { ClusterModel } from '../../model/resolve.js';
import { inventoryOf, renderInventory, type InventoryFormat } from './export.js';

export function exportInventoryText(model: ClusterModel, format: InventoryFormat, source: string): string {
  return renderInventory(
    inventoryOf(model),
    format,
    `Ansible inventory of cluster ${model.cluster.name}, written by kubemix inventory export from ${source}`,
  );
}
