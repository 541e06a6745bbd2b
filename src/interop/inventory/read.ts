// readInventory: an Ansible inventory file's text → Inventory. YAML when the
// file name says so or the text is a YAML mapping with an `all:`-style group;
// INI otherwise (as Ansible tries its plugins in turn).
import { parseIniInventory } from './ini.js';
import { checkInventorySize } from './limits.js';
import type { Inventory } from './types.js';
import { parseYamlInventory } from './yaml.js';

export function readInventory(text: string, file: string): Inventory {
  checkInventorySize(text, file);
  return isYamlInventory(text, file) ? parseYamlInventory(text, file) : parseIniInventory(text, file);
}

function isYamlInventory(text: string, file: string): boolean {
  if (/\.ya?ml$/i.test(file)) return true;
  if (/\.(ini|cfg)$/i.test(file)) return false;
  const first = text.split(/\r?\n/).find((l) => l.trim() !== '' && !/^\s*[#;]/.test(l));
  return first !== undefined && (first.trim() === '---' || /^[^\s[=]+:\s*$/.test(first));
}
