// Regenerates what is derived from the zod schema (run: npm run schema):
// schema/cluster.schema.json for editors, and src/spec/parser.generated.ts,
// the parser that validates a spec without loading zod.
import { writeFileSync } from 'node:fs';
import { clusterSchemaText } from '../dist/src/spec/schema-file.js';
import { specParserSource } from '../dist/src/spec/parser-source.js';

writeFileSync(new URL('../schema/cluster.schema.json', import.meta.url), clusterSchemaText());
writeFileSync(new URL('../src/spec/parser.generated.ts', import.meta.url), specParserSource());
