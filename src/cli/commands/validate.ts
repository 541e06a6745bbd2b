import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

export function registerValidate(program: Command, io: CliIo): void {
  withSpecOptions(
    program
      .command('validate')
      .description('check a spec: prints {ok, errors[], warnings[]} with --json; exit 0 valid, 2 invalid')
      .argument('<SPEC>', 'spec file, or Kubeinit spec string'),
  ).action((spec: string, opts: SpecOptions, command: Command) => {
    const out = outputFor(command, io);
    // An invalid spec throws; the top-level handler prints {ok: false, errors, warnings} and exits 2.
    const loaded = loadSpec(spec, opts, io);
    if (out.json) out.document({ ok: true, errors: [], warnings: loaded.warnings });
    else out.text(`${loaded.source}: valid (${loaded.nodes.length} nodes)`);
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}
