import type { Command } from 'commander';
import { outputFile, writeOutputFile } from '../../exec/local-paths.js';
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
  ).action(async (spec: string, opts: SpecOptions & { out?: string; force?: boolean }, command: Command) => {
    const out = outputFor(command, io);
    const ref = opts.out === undefined ? undefined : { flag: '--out', given: opts.out, cwd: io.cwd, code: 'init.out' };
    // Checked before the spec is read: nothing is planned for a place that cannot take it.
    const target =
      ref === undefined ? undefined : outputFile(ref, opts.force === true || { hint: 'pass --force to overwrite it' });
    const loaded = loadSpec(spec, opts, io);
    const text = specYaml(loaded.document, target?.path);
    if (ref !== undefined && target !== undefined) {
      await writeOutputFile(ref, target, text, 0o644);
      out.log('info', `wrote ${opts.out}`);
    }
    if (out.json)
      out.document({ ok: true, ...(opts.out === undefined ? { spec: loaded.document } : { written: opts.out }) });
    else if (target === undefined) out.text(text);
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}
