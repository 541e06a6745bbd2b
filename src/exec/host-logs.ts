// Per-host logs in <state>/logs/<host>.log (0600): every task's state changes
// and output lines, redacted line by line (a secret split across two chunks is
// still caught because lines are joined before redaction).
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { EventBus, ExecEvent } from './events.js';
import type { Redactor } from './secrets.js';

export class HostLogs {
  private readonly streams = new Map<string, WriteStream>();
  private readonly pending = new Map<string, string[]>();
  private flushing: NodeJS.Immediate | undefined;

  constructor(
    private readonly dir: string,
    private readonly redactor: Redactor,
  ) {}

  attach(bus: EventBus): () => void {
    return bus.subscribe((e) => this.onEvent(e));
  }

  private onEvent(e: ExecEvent): void {
    const stamp = new Date().toISOString();
    if (e.type === 'task')
      this.write(
        e.host,
        `${stamp} ${e.id} ${e.state}${e.attempt > 1 ? ` attempt ${e.attempt}` : ''}${e.reason ? ` (${e.reason})` : ''}${e.error ? `: ${e.error}` : ''}`,
      );
    else if (e.type === 'task:output')
      this.write(e.host, `${stamp} ${e.id} ${e.stream === 'stderr' ? '!' : '|'} ${e.line}`);
    else if (e.type === 'check:result')
      this.write(e.host, `${stamp} ${e.id} check: ${e.wouldChange ? 'would change' : 'up to date'} (${e.reason})`);
    else if (e.type === 'host:connected') this.write(e.host, `${stamp} connected in ${e.ms} ms`);
  }

  private write(host: string, line: string): void {
    const lines = this.pending.get(host);
    if (lines !== undefined) lines.push(this.redactor.redact(line));
    else this.pending.set(host, [this.redactor.redact(line)]);
    // One write per host per turn of the event loop, not one per line: a task's
    // state changes and output lines arrive together, and each stream.write
    // costs a write(2) in the thread pool.
    this.flushing ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = undefined;
    for (const [host, lines] of this.pending) {
      let stream = this.streams.get(host);
      if (!stream) {
        stream = createWriteStream(join(this.dir, `${host.replace(/[^A-Za-z0-9_.-]/g, '_')}.log`), {
          flags: 'a',
          mode: 0o600,
        });
        this.streams.set(host, stream);
      }
      stream.write(`${lines.join('\n')}\n`);
    }
    this.pending.clear();
  }

  async close(): Promise<void> {
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flush();
    await Promise.all([...this.streams.values()].map((s) => new Promise((r) => s.end(r))));
    this.streams.clear();
  }
}

/** Splits a byte stream into whole lines for one task's stream. */
export class LineSplitter {
  private rest = '';
  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    const lines = (this.rest + chunk.toString('utf8')).split('\n');
    this.rest = lines.pop() ?? '';
    for (const l of lines) this.onLine(l.replace(/\r$/, ''));
  }

  end(): void {
    if (this.rest !== '') this.onLine(this.rest);
    this.rest = '';
  }
}
