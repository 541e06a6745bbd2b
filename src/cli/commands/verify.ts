// `kubemix verify SPEC`: check that the cluster's underlay carries what the
// plan needs, node by node, and show it as a matrix. Exit 0 when every check
// that ran passed, 1 when one failed, 2 for bad input.
import type { Command } from 'commander';
import { FindingsError, InputError, InterruptedError } from '../../errors.js';
import { outputFile, writeOutputFile } from '../../exec/local-paths.js';
import { readJournal } from '../../exec/journal.js';
import { specSecretInputs } from '../../exec/secret-inputs.js';
import { statePaths } from '../../exec/state-dir.js';
import { clusterStatus } from '../../exec/status.js';
import { resolveModel } from '../../model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../../plan/assemble.js';
import { CLUSTER_TITLES, junitXml, matrixText, reportDocument, PROBE_TITLES } from '../../verify/report.js';
import { checkSelector } from '../../verify/select.js';
import { nodeTransports } from '../../verify/underlay/hosts.js';
import { planUnderlay, underlayInput } from '../../verify/underlay/plan.js';
import { runUnderlay } from '../../verify/underlay/run.js';
import type { CliIo } from '../io.js';
import { knownHostsFlag, withStateDirOption } from '../executor-flags.js';
import { outputFor, stateDir } from '../settings.js';
import type { Output } from '../output.js';
import { accessFor, checkClusterFlags, clusterLayer, demo } from '../verify-cluster.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

export interface VerifyFlags extends SpecOptions {
  readonly stateDir?: string;
  readonly kubeconfig?: string;
  readonly probeImage?: string[];
  readonly egress?: string[];
  readonly knownHosts?: string;
  readonly trustNewHosts?: boolean;
  readonly junit?: string;
  readonly only?: string;
  readonly skip?: string;
  readonly installed?: boolean;
  readonly demo?: boolean;
  readonly keep?: boolean;
}

const CELLS = `
Cells: ✓ passed, ✗ failed, –N skipped (reason N is printed under the matrix),
· a node and itself. Rows are sources (the node the probe runs on), columns
targets. Layer 1, the underlay, runs over SSH from every node:
${PROBE_TITLES.map(([re, text]) => `  ${re.source.replace(/^\^|\$$/g, '').padEnd(14)} ${text}`).join('\n')}
TCP 6443 and 10250 are skipped until the journal says the cluster is
deployed (or --installed); UDP 4789 only runs before install, when the CNI's
VXLAN device does not hold the port yet. Check ids are
layer/probe/source/target: --only and --skip match them.
Each failure names layer, probe, source, target, the command, its output and
the likely cause. Exit 0 all passed, 1 a check failed, 2 bad input.

Layer 2, the cluster, runs once the cluster is deployed (or with --installed
or --kubeconfig), through the Kubernetes API with the admin kubeconfig kubemix
captured (or --kubeconfig FILE):
${CLUSTER_TITLES.map(([re, text]) => `  ${re.source.replace(/^\^|\$$/g, '').padEnd(14)} ${text}`).join('\n')}
Probe pods run in the namespace kubemix-verify, deleted afterwards (also on
Ctrl-C; an earlier run's is deleted first and waited for while it is
Terminating). host-pod cells run from a hostNetwork pod (Linux) and a
HostProcess pod (Windows) where the cluster allows them: the namespace asks
for Pod Security level privileged; a cluster that enforces another level or
refuses the pod skips those cells with the reason. egress cells run only for
the targets given with --egress HOST:PORT: by default no traffic leaves the
cluster. Probe images: busybox 1.37.0 pinned by digest, Windows Server Core
per LTSC line pinned by tag; --probe-image KEY=REF[@sha256:…] overrides.
API calls answered 429 are retried after Retry-After (at most 5 times).
Layer 2 has run against a real cluster with Linux nodes only (kubeadm,
flannel, Debian 12 guests: docs/e2e.md); its Windows probes are checked
statically, against a stand-in of the API server.
`;

export function withVerifyOptions(command: Command): Command {
  return command
    .option('--junit <file>', 'also write the results as JUnit XML (one testcase per check) for CI')
    .option('--only <regex>', 'run only the checks whose id matches')
    .option('--skip <regex>', 'leave out the checks whose id matches')
    .option('--kubeconfig <file>', 'layer 2 through this kubeconfig (default: the admin kubeconfig kubemix captured)')
    .option(
      '--probe-image <key=ref>',
      'probe image override, key linux or a Windows LTSC line (ltsc2022, ltsc2025), e.g. linux=REG/busybox@sha256:…; repeatable',
      (v: string, all: string[] = []) => [...all, v],
    )
    .option(
      '--egress <host:port>',
      'also open a TCP connection from a pod on every node to this target outside the cluster (default: none); repeatable',
      (v: string, all: string[] = []) => [...all, v],
    );
}

export function registerVerify(program: Command, io: CliIo): void {
  withVerifyOptions(
    withStateDirOption(
      withSpecOptions(
        program
          .command('verify')
          .description(
            'check the underlay between every pair of nodes (UDP 4789, MTU, DNS, clocks, …) and show a matrix',
          )
          .argument('<SPEC>', 'spec file or Kubeinit string'),
      ),
    )
      .option(
        '--known-hosts <file>',
        'OpenSSH known_hosts file to verify host keys against (default <state dir>/known_hosts)',
      )
      .option(
        '--trust-new-hosts',
        'record the key of a host seen for the first time (TOFU); changed keys are still refused',
      )
      .option(
        '--installed',
        'check the API server and kubelet ports even if the journal does not show a finished deploy',
      )
      .option(
        '--demo',
        'instead of the checks: deploy a Linux web front end calling IIS on Windows, show it answering via a NodePort',
      )
      .option('--keep', 'with --demo: leave the demo running (namespace kubemix-demo)'),
  )
    .addHelpText('after', CELLS)
    .action(async (spec: string, flags: VerifyFlags, command: Command) => {
      await runVerify(spec, flags, io, outputFor(command, io));
    });
}

/** Every planned task done with today's inputs (the spec's URL credentials included), as `status` says. */
async function deployed(assembled: AssembledPlan, root: string): Promise<boolean> {
  const inputs = await specSecretInputs(assembled, statePaths(root).secrets);
  return clusterStatus(assembled.plan, await readJournal(root), inputs).complete;
}

/** Both layers, the matrix (or JSON), --junit; throws FindingsError (exit 1) when a check failed. */
export async function runVerify(spec: string, flags: VerifyFlags, io: CliIo, out: Output): Promise<void> {
  // Checked before any probe runs: a run is not wasted on a report that cannot be written.
  const junit = flags.junit === undefined ? undefined : { flag: '--junit', given: flags.junit, cwd: io.cwd };
  const junitTarget = junit === undefined ? undefined : outputFile(junit, true);
  const select = checkSelector(flags.only, flags.skip);
  checkClusterFlags(flags);
  const loaded = loadSpec(spec, flags, io);
  const model = resolveModel(loaded);
  const root = stateDir(flags.stateDir, io, loaded.clusterName, loaded.file);
  if (flags.keep === true && flags.demo !== true)
    throw new InputError('flags.invalid', '--keep only goes with --demo', { path: 'flags.keep' });
  if (flags.demo === true) return demo(model, root, flags, io, out);
  const installed =
    flags.installed === true || flags.kubeconfig !== undefined || (await deployed(assemblePlan(model), root));
  // Before any probe runs: a missing or unusable kubeconfig is exit 2 now, not after minutes of probes.
  const access = installed ? await accessFor(root, flags, io) : undefined;
  const plan = planUnderlay(underlayInput(model, installed), select);
  const transports = await nodeTransports(
    model.hosts,
    model.nodes.map((n) => n.name),
    {
      knownHostsFile: knownHostsFlag(flags.knownHosts, io) ?? statePaths(root).knownHosts,
      trustNewHosts: flags.trustNewHosts === true,
      agent: io.env['SSH_AUTH_SOCK'],
    },
  );
  let results;
  try {
    results = await runUnderlay(plan, { transports, signal: io.signal });
  } finally {
    await Promise.all([...transports.values()].map((t) => t.close()));
  }
  if (!io.signal.aborted && access !== undefined)
    results = [...results, ...(await clusterLayer(model, access, flags, io, out, results, select))];
  // Ctrl-C: the probes in flight were stopped; a partial matrix would read as a verdict.
  if (io.signal.aborted) throw new InterruptedError();
  if (junit !== undefined && junitTarget !== undefined)
    await writeOutputFile(junit, junitTarget, junitXml(results), 0o644);
  const document = reportDocument(results);
  if (!out.json)
    out.text(matrixText(results, [...new Set(model.nodes.flatMap((n) => [n.name, n.name.toLowerCase()]))]));
  if (!document.ok)
    throw new FindingsError(`${document.summary.failed} verify checks failed`, {
      hint: 'each failure above names the command, its output and the likely cause',
      report: document,
    });
  if (out.json) out.document(document);
}
