// A spec document as YAML for a file a user will edit (`init`, `inventory
// import`), with the editor hint that points at the committed JSON Schema.
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Document } from 'yaml';

/** The committed JSON Schema (dist/src/cli/ → repository root). */
export const SCHEMA_FILE = fileURLToPath(new URL('../../../schema/cluster.schema.json', import.meta.url));

/** `target`: where the YAML will be written (the schema path is made relative to it); undefined for stdout. */
export function specYaml(document: Record<string, unknown>, target: string | undefined): string {
  const schema = target === undefined ? SCHEMA_FILE : relative(dirname(target), SCHEMA_FILE);
  const doc = new Document(document);
  doc.commentBefore = ` yaml-language-server: $schema=${schema}`;
  return doc.toString({ lineWidth: 0 });
}
