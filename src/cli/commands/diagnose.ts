// `kubemix diagnose SPEC [--node N…] [--out DIR|FILE.tar.gz]`: collects what
// operators need for the common mixed-cluster failures from every node, the
// services node included, over SSH (in parallel, each node bounded in time),
// writes a redacted bundle — a directory (0700, files 0600) or a gzip tarball
// (0600) — and prints the known failure signatures that match (--json: as
// one JSON document).
// Exit 1 when a signature matched, 3 when a node could not be reached.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { FindingsError, HostError, InputError } from '../../errors.js';
import { collectBundle, findingsText, isTarball } from '../../diagnose/bundle.js';
import { diagnosedNodes } from '../../diagnose/plan.js';
import { resolveModel } from '../../model/resolve.js';
import { knownHostsFlag, withStateDirOption } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

interface DiagnoseFlags extends SpecOptions {
  readonly stateDir?: string;
  readonly knownHosts?: string;
  readonly trustNewHosts?: boolean;
  readonly node?: string[];
  readonly out?: string;
}

export function registerDiagnose(program: Command, io: CliIo): void {
  const diagnose = program
    .command('diagnose')
    .description('collect logs, HNS and network state from every node into a redacted bundle; name known failures')
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--node <name...>', 'only these nodes')
    .option('--out <path>', 'bundle directory to create (default diagnose-<cluster>), or FILE.tar.gz for a tarball')
    .option('--known-hosts <file>', 'OpenSSH known_hosts file (default <state dir>/known_hosts)')
    .option('--trust-new-hosts', 'record the key of a host seen for the first time (TOFU)');
  withStateDirOption(withSpecOptions(diagnose)).action(async (spec: string, flags: DiagnoseFlags, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, flags, io);
    const model = resolveModel(loaded);
    const nodes = diagnosedNodes(model, flags.node);
    const unknown = (flags.node ?? []).filter((n) => !nodes.some((x) => x.name === n));
    if (unknown.length > 0)
      throw new InputError('flags.node', `--node: ${unknown.join(', ')} is not a cluster node`, {
        path: '--node',
        hint: `nodes: ${diagnosedNodes(model, undefined)
          .map((n) => n.name)
          .join(', ')}`,
      });
    const dir = resolve(io.cwd, flags.out ?? `diagnose-${loaded.clusterName}`);
    const what = isTarball(dir) ? 'file' : 'directory';
    if (existsSync(dir))
      throw new InputError('diagnose.out-exists', `${dir} exists; the bundle goes into a new ${what}`, {
        path: '--out',
        hint: `name another ${what} with --out, or remove this one`,
      });
    if (!existsSync(dirname(dir)))
      throw new InputError('diagnose.out-parent', `${dirname(dir)} does not exist`, {
        path: '--out',
        hint: 'create the directory the bundle goes into first',
      });
    const result = await collectBundle(model, nodes, {
      stateDir: stateDir(flags.stateDir, io, loaded.clusterName, loaded.file),
      knownHostsFile: knownHostsFlag(flags.knownHosts, io),
      trustNewHosts: flags.trustNewHosts === true,
      signal: io.signal,
      out: dir,
    });
    const document = {
      ok: result.failed.length === 0 && result.findings.length === 0,
      cluster: loaded.clusterName,
      bundle: dir,
      findings: result.findings,
      failed: result.failed,
    };
    if (!out.json) io.stdout(findingsText(result.findings));
    out.log('info', `bundle: ${dir}`);
    if (result.failed.length > 0)
      throw new HostError('diagnose.unreachable', `nothing collected from ${result.failed.join('; ')}`, {
        report: document,
      });
    if (result.findings.length > 0)
      throw new FindingsError(`${result.findings.length} known failure signature(s) matched`, { report: document });
    if (out.json) out.document(document);
  });
}
