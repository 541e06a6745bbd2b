// `kubemix upgrade SPEC --to 1.NN[.P]`: refuses what the version skew policy
// forbids (exit 2, before any host is touched), then runs the upgrade plan
// through the executor with the cluster's own state directory (journal,
// secrets, known hosts), so an interrupted upgrade resumes where it stopped
// and never re-runs a finished node. When every node is through, the spec
// file gets the new version (only that scalar's bytes change; read-only refused
// up front, a spec edited during the run left alone) and the journal records the
// deploy plan hash of that version; `upgrade` to the same version then plans
// nothing. An unfinished upgrade is remembered in <state>/upgrade.json.
import { rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { readStateJson } from '../../exec/state-file.js';
import { join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { airGapPreflight, withAirGapOptions } from '../airgap-preflight.js';
import { writeFileDurable } from '../../exec/durable.js';
import { recordPlanHash } from '../../exec/journal.js';
import { prepareStateDir } from '../../exec/state-dir.js';
import { resolveModel, type ClusterModel } from '../../model/resolve.js';
import { assemblePlan } from '../../plan/assemble.js';
import { assembleUpgradePlan } from '../../plan/upgrade/assemble.js';
import { decideUpgrade, type UpgradeDecision } from '../../plan/upgrade/skew.js';
import { readSpec } from '../../spec/read.js';
import { withKubernetesVersion } from '../../spec/set-version.js';
import { displayFlags, positiveInt, withExecutorOptions, type ExecutorFlags } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { inMemoryTarget, runPlan } from '../run-plan.js';
import { outputFor, stateDir } from '../settings.js';
import { rewriteSpecFile, snapshotSpecFile } from '../spec-rewrite.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

interface UpgradeFlags extends SpecOptions, Omit<ExecutorFlags, 'stopAfter'> {
  readonly to?: string;
  readonly maxUnavailable?: string;
  readonly stopAfter?: string;
}

const MARKER = 'upgrade.json';

function inProgress(root: string): string | undefined {
  return readStateJson({
    path: join(root, MARKER),
    schema: z.object({ from: z.string(), to: z.string() }),
    code: 'upgrade.marker',
    hint: 'it records an unfinished upgrade ({"from": "1.NN.P", "to": "1.NN.P"}); remove it only if no node was upgraded',
  })?.to;
}

/** The spec text at the target version, validated like any spec (exit 2 on what the new version refuses). */
function targetSpec(file: string, text: string, decision: UpgradeDecision): { text: string; model: ClusterModel } {
  const next = withKubernetesVersion(text, decision.specVersion, file);
  return { text: next, model: resolveModel(readSpec({ kind: 'file', path: file, text: next })) };
}

export function registerUpgrade(program: Command, io: CliIo): void {
  const upgrade = program
    .command('upgrade')
    .description('upgrade Kubernetes one minor at a time, node by node (cordon, drain, upgrade, Ready, uncordon)')
    .argument('<SPEC>', 'spec file (it is rewritten with the new version once every node is through)')
    .option('--to <version>', 'target Kubernetes version, 1.NN (the matrix patch) or 1.NN.P')
    .option('--max-unavailable <n>', 'workers upgraded at once (control-plane nodes: always one)', '1')
    .option('--stop-after <node>', 'stop once this node is upgraded (run again without it to continue)');
  withExecutorOptions(withSpecOptions(withAirGapOptions(upgrade)), {
    check: 'show which upgrade steps would run, change nothing',
    selection: [],
  }).action(async (spec: string, flags: UpgradeFlags, command: Command) => {
    const out = outputFor(command, io);
    if (flags.to === undefined)
      throw new InputError('flags.to', 'kubemix upgrade needs --to', { path: '--to', hint: 'e.g. --to 1.36' });
    const maxUnavailable = positiveInt(flags.maxUnavailable, '--max-unavailable', 1);
    const loaded = loadSpec(spec, flags, io);
    if (loaded.file === undefined)
      throw new InputError('upgrade.spec-file', 'kubemix upgrade rewrites the spec: give a spec file', {
        path: spec,
        hint: 'write the Kubeinit string as a file with `kubemix init SPEC --out cluster.yaml`',
      });
    const file = loaded.file;
    const current = resolveModel(loaded);
    const root = stateDir(flags.stateDir, io, loaded.clusterName, file);
    const decision = decideUpgrade({
      current: current.versions.kubernetes,
      to: flags.to,
      containerd: current.versions.containerd,
      nodes: current.nodes,
      inProgress: inProgress(root),
    });
    if (decision.upToDate) {
      out.log('info', `${loaded.clusterName} is at ${decision.to} already: nothing to upgrade`);
      return;
    }
    const check = flags.check === true;
    // Read once, before any host is touched: a read-only spec is refused here, and the end
    // writes only if these bytes are still what the file holds.
    const snap = check ? undefined : snapshotSpecFile(file, 'kubemix upgrade');
    const target = targetSpec(file, snap?.text ?? readFileSync(file, 'utf8'), decision);
    const assembled = assembleUpgradePlan(target.model, {
      from: decision.from,
      maxUnavailable,
      stopAfter: flags.stopAfter,
      specText: target.text,
    });
    out.log(
      'info',
      `upgrade ${loaded.clusterName} ${decision.from} → ${decision.to}: ${assembled.plan.tasks.length} task(s)`,
    );
    if (!check) {
      // Air-gapped: the target's downloads and images are all here before any node is touched (exit 2 otherwise).
      await airGapPreflight(assembled.plan, root, flags, io);
      await prepareStateDir(root);
      await writeFileDurable(join(root, MARKER), `${JSON.stringify({ from: decision.from, to: decision.to })}\n`);
    }
    const { stopAfter: _node, ...executor } = flags;
    await runPlan(inMemoryTarget(assembled, root), executor, displayFlags(command), io);
    if (check) return;
    if (flags.stopAfter !== undefined) {
      out.log('info', `stopped after ${flags.stopAfter}; run the same command without --stop-after to continue`);
      return;
    }
    await recordPlanHash(root, loaded.clusterName, assemblePlan(target.model).plan.hash);
    await rm(join(root, MARKER), { force: true });
    if (snap !== undefined)
      await rewriteSpecFile(
        snap,
        target.text,
        `the cluster is at ${decision.to}: set spec.kubernetes.version to "${decision.specVersion}" in ${file}`,
      );
    out.log('info', `${file}: spec.kubernetes.version is now ${decision.specVersion} (${decision.to})`);
  });
}
