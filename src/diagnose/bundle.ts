// Runs the diagnose plan through the executor (host keys verified, its own
// journal under <state>/diagnose so every run collects afresh) and writes
// the bundle: <out>/<node>/<section>.txt and findings.{txt,json}, the
// directories 0700 and the files 0600, every text redacted first.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileDurable } from '../exec/durable.js';
import { tarGz } from './tarball.js';
import { HostError } from '../errors.js';
import { applyPlan } from '../exec/apply-plan.js';
import type { ExecEvent } from '../exec/events.js';
import { SecretStore } from '../exec/secrets.js';
import { statePaths } from '../exec/state-dir.js';
import type { ClusterModel } from '../model/resolve.js';
import type { PlanNode } from '../model/types.js';
import { assembleDiagnosePlan } from './plan.js';
import { redactText } from './redact.js';
import { splitSections } from './sections.js';
import { matchSignatures, type Finding, type NodeSections } from './signatures.js';

export interface DiagnoseOptions {
  readonly stateDir: string;
  readonly knownHostsFile?: string | undefined;
  readonly trustNewHosts?: boolean;
  readonly signal: AbortSignal;
  /** A new directory, or a file ending in .tar.gz / .tgz (the bundle as a gzip tarball, 0600). */
  readonly out: string;
  readonly listeners?: readonly ((e: ExecEvent) => void)[];
}

export interface DiagnoseResult {
  readonly findings: readonly Finding[];
  /** Nodes nothing could be collected from, with why. */
  readonly failed: readonly string[];
}

export async function collectBundle(
  model: ClusterModel,
  nodes: readonly PlanNode[],
  options: DiagnoseOptions,
): Promise<DiagnoseResult> {
  const { plan } = assembleDiagnosePlan(model, nodes);
  const own = join(options.stateDir, 'diagnose');
  await rm(statePaths(own).journal, { force: true });
  const output = new Map<string, string[]>();
  const collector = (e: ExecEvent): void => {
    if (e.type === 'task:output' && e.stream === 'stdout') output.set(e.host, [...(output.get(e.host) ?? []), e.line]);
  };
  let failed: string[] = [];
  try {
    await applyPlan(plan, new Map(), {
      stateDir: own,
      knownHostsFile: options.knownHostsFile ?? statePaths(options.stateDir).knownHosts,
      trustNewHosts: options.trustNewHosts === true,
      signal: options.signal,
      listeners: [collector, ...(options.listeners ?? [])],
    });
  } catch (error) {
    if (!(error instanceof HostError)) throw error;
    failed = nodes.filter((n) => !output.has(n.name)).map((n) => `${n.name}: ${error.message}`);
  } finally {
    // The executor's per-host logs there hold the raw output: the bundle, redacted, is the record.
    await rm(statePaths(own).logs, { recursive: true, force: true });
  }
  const secrets = (await SecretStore.open(statePaths(options.stateDir).secrets)).values();
  const collected: NodeSections[] = nodes
    .filter((n) => output.has(n.name))
    .map((n) => ({ node: n, sections: splitSections(redactText((output.get(n.name) ?? []).join('\n'), secrets)) }));
  const findings = matchSignatures(
    { ...model.cluster, windowsHostProcess: model.windowsHostProcess !== undefined },
    collected,
  );
  await writeBundle(options.out, collected, findings, failed);
  return { findings, failed };
}

export function findingsText(findings: readonly Finding[]): string {
  if (findings.length === 0) return 'no known failure signature matched\n';
  return findings
    .map(
      (f) =>
        `${f.node}: ${f.id}\n  cause: ${f.cause}\n  evidence: ${f.evidence}\n  next: ${f.next}\n${f.reference === undefined ? '' : `  see: ${f.reference}\n`}`,
    )
    .join('\n');
}

/** Whether --out names a tarball rather than a directory. */
export function isTarball(out: string): boolean {
  return /\.(tar\.gz|tgz)$/.test(out);
}

function bundleFiles(
  collected: readonly NodeSections[],
  findings: readonly Finding[],
  failed: readonly string[],
): { path: string; content: string }[] {
  return [
    ...collected.flatMap((n) =>
      [...n.sections].map(([name, text]) => ({ path: `${n.node.name}/${name}.txt`, content: `${text}\n` })),
    ),
    { path: 'findings.txt', content: findingsText(findings) },
    { path: 'findings.json', content: `${JSON.stringify({ findings, failed }, null, 1)}\n` },
  ];
}

async function writeBundle(
  out: string,
  collected: readonly NodeSections[],
  findings: readonly Finding[],
  failed: readonly string[],
): Promise<void> {
  if (isTarball(out)) {
    // One directory inside, named after the file, as `tar xzf` users expect.
    const top = basename(out).replace(/\.(tar\.gz|tgz)$/, '');
    const files = bundleFiles(collected, findings, failed);
    const dirs = [top, ...collected.map((n) => `${top}/${n.node.name}`)].map((d) => ({ path: `${d}/` }));
    const entries = [...dirs, ...files.map((f) => ({ path: `${top}/${f.path}`, content: f.content }))];
    // Temp file, fsync, rename: a crash leaves no half-written archive under the name asked for.
    await writeFileDurable(out, await tarGz(entries, Date.now() / 1000), 0o600);
    return;
  }
  await mkdir(out, { recursive: true, mode: 0o700 });
  for (const n of collected) {
    const dir = join(out, n.node.name);
    await mkdir(dir, { mode: 0o700 });
    for (const [name, text] of n.sections) await writeFile(join(dir, `${name}.txt`), `${text}\n`, { mode: 0o600 });
  }
  await writeFile(join(out, 'findings.txt'), findingsText(findings), { mode: 0o600 });
  await writeFile(join(out, 'findings.json'), `${JSON.stringify({ findings, failed }, null, 1)}\n`, { mode: 0o600 });
}
