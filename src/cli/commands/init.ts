import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import type { CliIo } from '../io.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';
import { specYaml } from '../spec-yaml.js';

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
        throw new InputError('init.exists', `${opts.out} already exists`, {
          path: '--out',
          hint: 'pass --force to overwrite it',
        });
      }
      writeFileSync(target, text);
      out.log('info', `wrote ${opts.out}`);
    }
    if (out.json)
      out.document({ ok: true, ...(opts.out === undefined ? { spec: loaded.document } : { written: opts.out }) });
    else if (target === undefined) out.text(text);
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}
