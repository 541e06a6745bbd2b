// `kubemix topology SPEC [--out FILE.svg|FILE.html]`: the cluster drawn.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { renderTopologyHtml } from '../../interop/topology/html.js';
import { renderTopologySvg } from '../../interop/topology/svg.js';
import { resolveModel } from '../../model/resolve.js';
import type { CliIo } from '../io.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

export function registerTopology(program: Command, io: CliIo): void {
  withSpecOptions(
    program
      .command('topology')
      .description('draw the physical and logical topology as SVG (stdout or --out FILE.svg) or HTML (--out FILE.html)')
      .argument('<SPEC>', 'spec file, or Kubeinit spec string')
      .option('--out <FILE>', 'FILE.svg or FILE.html'),
  ).action((spec: string, opts: SpecOptions & { out?: string }, command: Command) => {
    const out = outputFor(command, io);
    if (opts.out !== undefined && !/\.(svg|html?)$/i.test(opts.out)) {
      throw new InputError('flags.invalid', `--out ${opts.out}: the file name must end in .svg or .html`, {
        path: '--out',
      });
    }
    const loaded = loadSpec(spec, opts, io);
    const model = resolveModel(loaded);
    const html = opts.out !== undefined && /\.html?$/i.test(opts.out);
    const body = html ? renderTopologyHtml(model) : renderTopologySvg(model);
    if (opts.out === undefined) out.text(body);
    else {
      writeFileSync(resolve(io.cwd, opts.out), body);
      out.log('info', `wrote ${opts.out}`);
    }
    if (out.json) out.document({ ok: true, ...(opts.out === undefined ? { svg: body } : { written: opts.out }) });
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}
