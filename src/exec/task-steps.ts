// The steps of one task on its host: compare uploads, check, upload, apply,
// capture secrets. Pure sequencing; retries live in task-runner.ts.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostError } from '../errors.js';
import { uploadPath } from '../plan/artifact-path.js';
import type { Shell } from '../model/types.js';
import type { Command, Task } from '../plan/types.js';
import { psQuote, shellQuote } from '../transport/framing.js';
import type { ConvergeResult, ExecRequest, ExecResult, HostTransport } from '../transport/types.js';
import { sha256 } from './hash.js';
import { LineSplitter } from './host-logs.js';
import { secretRefs } from './secrets.js';
import { fillDownloads } from './downloads.js';
import type { RunContext } from './context.js';

export interface PreparedUpload {
  readonly remotePath: string;
  readonly content: Buffer;
  readonly sha256: string;
  readonly mode: string;
  readonly owner: string;
}

/** Fills secrets into artifacts; a file that held any secret is written 0600. */
export function prepareUploads(task: Task, ctx: RunContext): PreparedUpload[] {
  return task.uploads.map((u) => {
    const a = ctx.artifacts.get(u.artifact);
    const raw = ctx.contents.get(u.artifact);
    if (!a || !raw)
      throw new HostError('plan.artifact-missing', `${task.id}: artifact ${u.artifact} is not loaded`, {
        path: task.id,
      });
    const text = raw.toString('utf8');
    const secret = secretRefs(text).length > 0;
    const where = `${task.id} upload ${a.remotePath}`;
    const filled = secret ? ctx.secrets.fill(text, where) : text;
    const withHashes = filled.includes('{{sha256:') ? fillDownloads(filled, ctx.downloads.hashes, where) : filled;
    const content = secret || withHashes !== filled ? Buffer.from(withHashes) : raw;
    return {
      remotePath: uploadPath(a),
      content,
      sha256: sha256(content),
      mode: secret ? '0600' : a.mode,
      owner: a.owner,
    };
  });
}

function hashScript(shell: Shell, paths: readonly string[]): string {
  if (shell === 'powershell') {
    return `foreach ($f in @(${paths.map(psQuote).join(',')})) { if (Test-Path -LiteralPath $f) { (Get-FileHash -Algorithm SHA256 -LiteralPath $f).Hash.ToLower() } else { 'missing' } }`;
  }
  return `for f in ${paths.map(shellQuote).join(' ')}; do if [ -f "$f" ]; then sha256sum < "$f" | cut -d' ' -f1; else echo missing; fi; done`;
}

/** Uploads whose remote content differs from what the plan wants. */
export async function staleUploads(
  task: Task,
  uploads: readonly PreparedUpload[],
  t: HostTransport,
): Promise<PreparedUpload[]> {
  if (uploads.length === 0) return [];
  const r = await t.exec({
    shell: task.apply.shell,
    privilege: task.apply.privilege,
    script: hashScript(
      task.apply.shell,
      uploads.map((u) => u.remotePath),
    ),
    timeoutMs: 60_000,
  });
  const lines = r.stdout.trim().split(/\r?\n/);
  return uploads.filter((u, i) => lines[i]?.trim() !== u.sha256);
}

/** A command's request with its secrets and download hashes filled in, streaming lines to events. */
function commandRequest(
  task: Task,
  which: 'check' | 'apply',
  command: Command,
  ctx: RunContext,
  streams: { out: LineSplitter; err: LineSplitter },
): ExecRequest {
  const where = `${task.id} ${which}`;
  return {
    shell: command.shell,
    privilege: command.privilege,
    script: fillDownloads(ctx.secrets.fill(command.script, where), ctx.downloads.hashes, where),
    timeoutMs: task.timeoutSeconds * 1000,
    onStdout: (c) => streams.out.push(c),
    onStderr: (c) => streams.err.push(c),
  };
}

function outputLines(task: Task, ctx: RunContext): { out: LineSplitter; err: LineSplitter } {
  const emit = (stream: 'stdout' | 'stderr') =>
    new LineSplitter((line) => ctx.bus.emit({ type: 'task:output', id: task.id, host: task.host, stream, line }));
  return { out: emit('stdout'), err: emit('stderr') };
}

function transportOf(task: Task, ctx: RunContext): HostTransport {
  const t = ctx.transports.get(task.host);
  if (!t) throw new HostError('exec.no-transport', `${task.host}: no connection`, { path: task.host });
  return t;
}

/** Runs one command with its secrets filled in, streaming lines to events. */
export async function runCommand(
  task: Task,
  which: 'check' | 'apply',
  command: Command,
  ctx: RunContext,
): Promise<ExecResult> {
  const t = transportOf(task, ctx);
  const streams = outputLines(task, ctx);
  const result = await t.exec(commandRequest(task, which, command, ctx, streams));
  streams.out.end();
  streams.err.end();
  if (result.timedOut)
    throw new HostError('task.timeout', `${task.host}: ${task.id}: ${which} timed out after ${task.timeoutSeconds} s`, {
      path: task.id,
    });
  return result;
}

/**
 * Check, and apply when the check fails, through the transport's converge
 * (one round trip where it can); undefined when the transport has none.
 */
export async function runConverge(task: Task, check: Command, ctx: RunContext): Promise<ConvergeResult | undefined> {
  const t = transportOf(task, ctx);
  if (t.converge === undefined) return undefined;
  const streams = outputLines(task, ctx);
  const result = await t.converge(
    commandRequest(task, 'check', check, ctx, streams),
    commandRequest(task, 'apply', task.apply, ctx, streams),
  );
  streams.out.end();
  streams.err.end();
  if (result.timedOut)
    throw new HostError(
      'task.timeout',
      `${task.host}: ${task.id}: ${result.timedOutPart ?? 'apply'} timed out after ${task.timeoutSeconds} s`,
      { path: task.id },
    );
  return result;
}

export function applyFailed(task: Task, result: ExecResult): HostError {
  const tail =
    result.stderr.trim().split('\n').slice(-5).join('\n') || result.stdout.trim().split('\n').slice(-5).join('\n');
  return new HostError(
    'task.failed',
    `${task.host}: ${task.id}: apply exited ${result.code}${tail ? `: ${tail}` : ''}`,
    { path: task.id },
  );
}

/** Reads the secrets a task declares it produces and stores them. */
export async function captureSecrets(task: Task, ctx: RunContext, onlyMissing: boolean): Promise<void> {
  const t = ctx.transports.get(task.host);
  for (const c of task.captures ?? []) {
    if (onlyMissing && ctx.secrets.has(c.name)) continue;
    const value = (await t?.readFile(c.remotePath, task.apply.privilege))?.trim() ?? '';
    if (value === '')
      throw new HostError(
        'secret.capture',
        `${task.host}: ${task.id}: ${c.remotePath} is empty; cannot capture secret ${c.name}`,
        { path: task.id },
      );
    await ctx.secrets.set(c.name, { value, source: 'captured', from: task.id });
    ctx.bus.emit({ type: 'secret:stored', name: c.name, source: 'captured', by: task.id });
  }
}

/** Fact-gathering output is kept per host: <state>/facts/<host>/<task name>.txt (redacted). */
export async function keepFacts(task: Task, result: ExecResult, ctx: RunContext): Promise<void> {
  if (task.stage !== 'task-gather-facts') return;
  const dir = join(ctx.factsDir, task.host);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(join(dir, `${task.name}.txt`), ctx.redactor.redact(result.stdout), { mode: 0o600 });
}

/**
 * Task.serves: the host's cache holds `<dir>/<sha256>` for every listed
 * download. Probes what is there, uploads from the deployer's verified cache
 * only what differs; returns how many files went up.
 */
export async function fillServedCache(task: Task, ctx: RunContext, t: HostTransport): Promise<number> {
  const serves = task.serves;
  if (serves === undefined || serves.downloads.length === 0) return 0;
  const cache = ctx.downloads.cache;
  if (cache === undefined)
    throw new HostError('download.no-cache', `${task.id}: no download cache in this run`, { path: task.id });
  const wanted = serves.downloads.map((id) => {
    const hash = ctx.downloads.hashes.get(id);
    const d = ctx.downloads.byId.get(id);
    if (hash === undefined || d === undefined)
      throw new HostError('download.unresolved', `${task.id}: download ${id} is not in the plan's downloads`, {
        path: task.id,
      });
    return { id, d, hash, remotePath: `${serves.dir}/${hash}` };
  });
  const r = await t.exec({
    shell: task.apply.shell,
    privilege: task.apply.privilege,
    script: `mkdir -p ${shellQuote(serves.dir)}\n${hashScript(
      task.apply.shell,
      wanted.map((w) => w.remotePath),
    )}`,
    timeoutMs: 600_000,
  });
  const lines = r.stdout.trim().split(/\r?\n/);
  const stale = wanted.filter((w, i) => lines[i]?.trim() !== w.hash);
  for (const w of stale) {
    const { content } = await cache.content(w.d);
    await t.upload({
      shell: task.apply.shell,
      privilege: task.apply.privilege,
      remotePath: w.remotePath,
      content,
      mode: '0644',
      owner: 'root:root',
    });
    ctx.bus.emit({
      type: 'download',
      id: w.id,
      action: 'uploaded',
      sha256: w.hash,
      host: task.host,
      bytes: content.length,
    });
  }
  return stale.length;
}
