#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm ci` (the "prepare" script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('kubemix: not built yet. Run `npm ci` (or `npm run build`) in the kubemix checkout first.\n');
  process.exit(4);
}
const { main } = await import(entry.href);
await main(process.argv.slice(2));
