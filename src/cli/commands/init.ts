import { existsSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { Document } from 'yaml';
import { InputError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

/** The committed JSON Schema, for the editor hint at the top of a written spec. */
export const SCHEMA_FILE = fileURLToPath(new URL('../../../../schema/cluster.schema.json', import.meta.url));

export function registerInit(program: Command, io: CliIo): void {
  withSpecOptions(
    program
      .command('init')
      .description('write the YAML spec equivalent to SPEC (e.g. a Kubeinit string) to stdout or --out')
      .argument('<SPEC>', 'Kubeinit spec string, or a spec file')
      .option('--out <FILE>', 'write to FILE instead of stdout')
      .option('--force', 'overwrite FILE if it exists'),
  ).action((spec: string, opts: SpecOptions & { out?: string; force?: boolean }, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, opts, io);
    const target = opts.out === undefined ? undefined : resolve(io.cwd, opts.out);
    const text = specYaml(loaded.document, target);
    if (target !== undefined) {
      if (existsSync(target) && opts.force !== true) {
        throw new InputError('init.exists', `${opts.out} already exists`, { path: '--out', hint: 'pass --force to overwrite it' });
      }
      writeFileSync(target, text);
      out.log('info', `wrote ${opts.out}`);
    }
    if (out.json) out.document({ ok: true, ...(opts.out === undefined ? { spec: loaded.document } : { written: opts.out }) });
    else if (target === undefined) out.text(text);
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}

/** The schema's `$id`: names it the same way on every machine (an editor maps it with yaml.schemas). */
export const SCHEMA_ID = 'https://kubemix.dev/schema/v1alpha1/cluster.json';
const KUBEMIX_DIR = dirname(dirname(SCHEMA_FILE));

/**
 * The spec as YAML with the editor hint on top: a relative path to the schema
 * when the file is written inside the kubemix checkout (the examples), else
 * the schema's `$id` — never a path of the machine that wrote it.
 */
export function specYaml(document: Record<string, unknown>, target: string | undefined): string {
  const inside = target !== undefined && !relative(KUBEMIX_DIR, target).startsWith('..') && !isAbsolute(relative(KUBEMIX_DIR, target));
  const schema = inside ? relative(dirname(target), SCHEMA_FILE) : SCHEMA_ID;
  const doc = new Document(document);
  doc.commentBefore = ` yaml-language-server: $schema=${schema}`;
  return doc.toString({ lineWidth: 0 });
}
