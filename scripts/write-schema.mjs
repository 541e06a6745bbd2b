// Regenerates schema/cluster.schema.json from the zod schema (run: npm run schema).
import { writeFileSync } from 'node:fs';
import { clusterSchemaText } from '../dist/src/spec/schema-file.js';

writeFileSync(new URL('../schema/cluster.schema.json', import.meta.url), clusterSchemaText());
