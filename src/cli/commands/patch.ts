// `kubemix patch SPEC [--nodes …] [--kb KB…] [--security-only]`: Windows
// updates on Windows workers, one node at a time (--max-unavailable), through
// the executor: cordon, drain, install, reboot, Ready, pod network back, the
// node's verify cells, uncordon — on the nodes the patch query found
// something pending on, and only those (src/patch/run.ts). A node that does
// not come back healthy stays cordoned and the error names its updates and
// their rollback. Its journal lives in <state>/patch while a roll is under
// way (a re-run resumes it) and is cleared once the roll is through.
// --check prints the pending updates per node, installs nothing.
import type { Command } from 'commander';
import { FindingsError, InputError } from '../../errors.js';
import { statePaths } from '../../exec/state-dir.js';
import { resolveModel } from '../../model/resolve.js';
import { patchNodes, queryPending } from '../../patch/run.js';
import { patchedNodes } from '../../plan/patch/assemble.js';
import { needsPatch, pendingText } from '../../plan/patch/query.js';
import {
  applyOptions,
  displayFlags,
  knownHostsFlag,
  positiveInt,
  withExecutorOptions,
  type ExecutorFlags,
} from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { inMemoryTarget, renderer, runPlan } from '../run-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec } from '../spec-arg.js';

// --nodes here names the Windows workers to patch, so the Kubeinit-only --nodes/--hypervisors overrides are not offered.
interface PatchFlags extends ExecutorFlags {
  readonly nodes?: string[];
  readonly kb?: string[];
  readonly securityOnly?: boolean;
  readonly linux?: boolean;
  readonly maxUnavailable?: string;
}

function kbs(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((v) => {
    const m = /^(?:KB)?(\d{6,8})$/i.exec(v.trim());
    if (m === null)
      throw new InputError('flags.kb', `--kb ${JSON.stringify(v)} is not a KB article number`, {
        path: '--kb',
        hint: 'e.g. --kb KB5040437',
      });
    return `KB${m[1] ?? ''}`;
  });
}

export function registerPatch(program: Command, io: CliIo): void {
  const patch = program
    .command('patch')
    .description(
      'install pending updates node by node, Windows workers (with --linux Linux nodes too): cordon, drain, reboot, checks, uncordon',
    )
    .argument('<SPEC>', 'spec file or Kubeinit string')
    .option('--nodes <name...>', 'only these Windows workers')
    .option('--kb <article...>', 'only these Windows updates (KB5040437)')
    .option(
      '--security-only',
      'only security updates (Windows: the Security Updates category; Linux: the security archive)',
    )
    .option('--linux', 'Linux nodes too (control planes one at a time first): apt or dnf, Kubernetes packages held')
    .option('--max-unavailable <n>', 'Windows workers patched at once', '1');
  withExecutorOptions(patch, {
    check: 'list the pending updates per node, install nothing',
    selection: [],
  }).action(async (spec: string, flags: PatchFlags, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, {}, io);
    const model = resolveModel(loaded);
    const options = {
      nodes: flags.nodes,
      kbs: kbs(flags.kb),
      securityOnly: flags.securityOnly === true,
      linux: flags.linux === true,
      maxUnavailable: positiveInt(flags.maxUnavailable, '--max-unavailable', 1),
    };
    const nodes = patchedNodes(model, options.nodes, options.linux);
    if (nodes.length === 0) {
      out.log('info', `${loaded.clusterName} has no ${options.linux ? 'node' : 'Windows worker'} to patch`);
      return;
    }
    const state = statePaths(stateDir(flags.stateDir, io, loaded.clusterName, loaded.file));
    const display = displayFlags(command);
    const executor = { ...flags, knownHosts: knownHostsFlag(flags.knownHosts, io) ?? state.knownHosts };
    const { check: _check, ...query } = applyOptions(executor, io);
    // --check --json prints one document: the report, not the executor's event lines.
    const queryOptions = { ...query, listeners: display.json && flags.check === true ? [] : [renderer(io, display)] };
    if (flags.check === true) {
      const pending = await queryPending(model, nodes, options, state.root, queryOptions);
      const due = [...pending.values()].filter(needsPatch).length;
      const report = { ok: due === 0, pending: Object.fromEntries(pending) };
      if (!out.json) io.stdout(pendingText(pending));
      if (due > 0) throw new FindingsError(`${due} node(s) have pending updates`, { report });
      if (out.json) out.document(report);
      return;
    }
    const result = await patchNodes(model, options, {
      stateDir: state.root,
      query: queryOptions,
      runRoll: (plan, dir) => runPlan(inMemoryTarget(plan, dir), executor, display, io),
    });
    if (!result.resumed && !display.json) io.stdout(pendingText(result.pending));
    out.log(
      'info',
      result.rolled.length === 0
        ? 'nothing pending: no node was cordoned'
        : `${result.resumed ? 'resumed the roll of' : 'patched'} ${result.rolled.join(', ')}`,
    );
  });
}
