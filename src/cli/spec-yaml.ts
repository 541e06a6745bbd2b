// A spec document as YAML for a file a user will edit (`init`, `inventory
// import`), with the editor hint that points at the committed JSON Schema.
import { dirname, isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Document } from 'yaml';

/** The committed JSON Schema (dist/src/cli/ → repository root). */
export const SCHEMA_FILE = fileURLToPath(new URL('../../../schema/cluster.schema.json', import.meta.url));

/** The schema's `$id`: names it the same way on every machine (an editor maps it with yaml.schemas). */
export const SCHEMA_ID = 'https://kubemix.dev/schema/v1alpha1/cluster.json';
const KUBEMIX_DIR = dirname(dirname(SCHEMA_FILE));

/**
 * The spec as YAML with the editor hint on top: a relative path to the schema
 * when the file is written inside the kubemix checkout (the examples), else
 * the schema's `$id` — never a path of the machine that wrote it.
 * `target`: where the YAML will be written; undefined for stdout.
 */
export function specYaml(document: Record<string, unknown>, target: string | undefined): string {
  const fromCheckout = target === undefined ? '..' : relative(KUBEMIX_DIR, target);
  const inside = target !== undefined && !fromCheckout.startsWith('..') && !isAbsolute(fromCheckout);
  const schema = inside ? relative(dirname(target), SCHEMA_FILE) : SCHEMA_ID;
  const doc = new Document(document);
  doc.commentBefore = ` yaml-language-server: $schema=${schema}`;
  return doc.toString({ lineWidth: 0 });
}
