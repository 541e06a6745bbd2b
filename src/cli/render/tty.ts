// TTY progress: one line per host (stage, task, elapsed), redrawn in place,
// then the plain summary. Failures and retries are printed as they happen.
import type { ExecEvent } from '../../exec/events.js';
import { plainLine } from './plain.js';

interface HostLine {
  stage: string;
  task: string;
  since: number;
  done: number;
  note: string;
}

export class TtyRenderer {
  private readonly hosts = new Map<string, HostLine>();
  private drawn = 0;
  private timer: NodeJS.Timeout | undefined;
  private now = 0;

  /**
   * `write` escapes control characters (host and task names come from the
   * spec); `control` carries only the cursor moves this renderer makes.
   */
  constructor(
    private readonly write: (text: string) => void,
    private readonly control: (text: string) => void = write,
  ) {}

  readonly listener = (e: ExecEvent): void => {
    this.now = e.t;
    if (e.type === 'task') {
      const h = this.hosts.get(e.host) ?? { stage: '', task: '', since: e.t, done: 0, note: '' };
      if (e.state === 'running')
        Object.assign(h, { stage: e.stage, task: e.id.split('/').pop() ?? e.id, since: e.t, note: '' });
      if (e.state === 'done' || e.state === 'skipped') h.done += 1;
      if (e.state === 'retrying' || e.state === 'failed') {
        h.note = e.state;
        this.print(plainLine(e, false));
      }
      this.hosts.set(e.host, h);
    } else if (e.type === 'run:end' || e.type === 'check:result' || e.type === 'lock:stale') {
      if (e.type !== 'check:result' || e.wouldChange) this.print(plainLine(e, false));
    }
    if (e.type === 'run:end') this.stop();
    else this.schedule();
  };

  private print(line: string | undefined): void {
    if (line === undefined) return;
    this.clear();
    this.write(`${line}\n`);
    this.draw();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.clear();
      this.draw();
    }, 100);
  }

  private clear(): void {
    if (this.drawn > 0) this.control(`\u001b[${this.drawn}A\u001b[J`);
    this.drawn = 0;
  }

  private draw(): void {
    const width = Math.max(4, ...[...this.hosts.keys()].map((h) => h.length));
    for (const [host, h] of this.hosts) {
      const elapsed = ((this.now - h.since) / 1000).toFixed(1);
      this.write(
        `${host.padEnd(width)}  ${String(h.done).padStart(3)} done  ${h.stage} ${h.task} ${elapsed}s ${h.note}\n`,
      );
    }
    this.drawn = this.hosts.size;
  }

  private stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
