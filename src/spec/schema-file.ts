// The committed JSON Schema (schema/cluster.schema.json) as text; a test
// fails when the file and the zod schema disagree, and
// `npm run schema` rewrites it.
import { clusterJsonSchema } from './schema.js';

export function clusterSchemaText(): string {
  return `${JSON.stringify(clusterJsonSchema(), null, 2)}\n`;
}
