// Plain log lines (not a TTY) and NDJSON (--json): one line per event.
import type { ExecEvent } from '../../exec/events.js';

function secs(ms: number | undefined): string {
  return ms === undefined ? '' : ` ${(ms / 1000).toFixed(1)}s`;
}

export function plainLine(e: ExecEvent, verbose: boolean): string | undefined {
  const at = `[${(e.t / 1000).toFixed(1).padStart(6)}s]`;
  switch (e.type) {
    case 'run:start':
      return `${at} ${e.mode} ${e.cluster} plan ${e.planHash.slice(0, 12)}: ${e.selected}/${e.tasks} tasks on ${e.hosts.length} host(s)`;
    case 'host:connecting':
      return e.attempt > 1 ? `${at} ${e.host}: reconnecting (attempt ${e.attempt})` : undefined;
    case 'host:connected':
      return `${at} ${e.host}: connected in ${e.ms} ms`;
    case 'task': {
      if (e.state === 'running' && e.attempt === 1 && !verbose) return undefined;
      const extra = e.state === 'done' ? (e.changed ? ' (changed)' : ' (already right)') : '';
      const why = e.reason ? ` (${e.reason})` : '';
      const err = e.error ? `: ${e.error}` : '';
      const retry = e.retryInMs === undefined ? '' : `; retrying in ${(e.retryInMs / 1000).toFixed(1)}s`;
      return `${at} ${e.host} ${e.id} ${e.state}${e.attempt > 1 ? ` attempt ${e.attempt}` : ''}${extra}${why}${secs(e.elapsedMs)}${err}${retry}`;
    }
    case 'task:output':
      return verbose ? `${at} ${e.host} ${e.id} ${e.stream === 'stderr' ? '!' : '|'} ${e.line}` : undefined;
    case 'check:result':
      return `${at} ${e.host} ${e.id}: ${e.wouldChange ? 'WOULD CHANGE' : 'up to date'} (${e.reason})`;
    case 'secret:stored':
      return `${at} secret ${e.name} ${e.source}${e.by ? ` by ${e.by}` : ''}`;
    case 'download':
      return e.action === 'cached' && !verbose
        ? undefined
        : `${at} download ${e.id} ${e.action}${e.host === undefined ? '' : ` to ${e.host}`} (sha256 ${e.sha256.slice(0, 12)})`;
    case 'lock:stale':
      return `${at} took over a stale lock (pid ${e.pid} on ${e.host} is gone)`;
    case 'run:end':
      return `${at} ${summary(e)}`;
  }
}

export function summary(e: Extract<ExecEvent, { type: 'run:end' }>): string {
  const counts = Object.entries(e.counts)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const head = e.interrupted ? 'interrupted' : e.ok ? 'ok' : 'FAILED';
  const change = e.mode === 'check' ? `; ${e.changes ?? 0} task(s) would change` : `; ${e.changes ?? 0} changed`;
  return `${e.mode} ${head} in ${(e.elapsedMs / 1000).toFixed(1)}s: ${counts || 'nothing to do'}${change}`;
}
