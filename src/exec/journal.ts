// The journal: every task's state with its input hash and the plan hash,
// rewritten durably (temp + fsync + rename + dir fsync) on every change that
// matters, so `kill -9` at any moment loses nothing already reported done.
import { readFile } from 'node:fs/promises';
import { InputError } from '../errors.js';
import { writeFileDurable } from './durable.js';
import { statePaths } from './state-dir.js';

export const TASK_STATES = ['pending', 'running', 'retrying', 'done', 'failed', 'skipped', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface JournalEntry {
  readonly state: TaskState;
  readonly host: string;
  readonly inputHash: string;
  readonly attempts: number;
  /** Whether apply ran (false: check said the host already was right). */
  readonly changed?: boolean;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Redacted. */
  readonly error?: string;
}

export interface JournalDocument {
  readonly version: 1;
  readonly cluster: string;
  readonly planHash: string;
  readonly updatedAt: string;
  readonly tasks: Record<string, JournalEntry>;
}

export class Journal {
  private tasks: Record<string, JournalEntry> = {};
  private requested = 0;
  private written = 0;
  private writing: Promise<void> | undefined;

  private constructor(
    readonly path: string,
    private readonly cluster: string,
    private planHash: string,
  ) {}

  static async open(stateDir: string, cluster: string, planHash: string): Promise<Journal> {
    const journal = new Journal(statePaths(stateDir).journal, cluster, planHash);
    try {
      const doc = JSON.parse(await readFile(journal.path, 'utf8')) as JournalDocument;
      if (doc.version === 1) journal.tasks = { ...doc.tasks };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return journal;
  }

  entry(id: string): JournalEntry | undefined {
    return this.tasks[id];
  }

  /** Done with this exact input: may be skipped. */
  isDone(id: string, inputHash: string): boolean {
    const e = this.tasks[id];
    return e?.state === 'done' && e.inputHash === inputHash;
  }

  /** Records a state; `durable` waits until it is on disk. */
  async record(id: string, entry: JournalEntry, durable = true): Promise<void> {
    this.tasks[id] = entry;
    if (durable) await this.flush();
  }

  async flush(): Promise<void> {
    const generation = ++this.requested;
    while (this.written < generation) {
      if (!this.writing) {
        const target = this.requested;
        this.writing = this.write()
          .then(() => void (this.written = target))
          .finally(() => (this.writing = undefined));
      }
      await this.writing;
    }
  }

  private write(): Promise<void> {
    const doc: JournalDocument = {
      version: 1,
      cluster: this.cluster,
      planHash: this.planHash,
      updatedAt: new Date().toISOString(),
      tasks: this.tasks,
    };
    return writeFileDurable(this.path, `${JSON.stringify(doc, null, 1)}\n`, 0o600);
  }
}

/**
 * The journal of a state directory as last written, for reports (`status`,
 * `add-node`); undefined when nothing was ever run there.
 */
export async function readJournal(stateDir: string): Promise<JournalDocument | undefined> {
  const path = statePaths(stateDir).journal;
  try {
    return JSON.parse(await readFile(path, 'utf8')) as JournalDocument;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const why = error instanceof Error ? error.message : String(error);
    throw new InputError('state.journal', `cannot read the journal in ${stateDir}: ${why}`, {
      path,
      hint: 'remove it to start over: every task runs again, and its check skips what is already in place',
    });
  }
}

/**
 * Makes the journal name `planHash` as the plan it belongs to (after an
 * upgrade: the deploy plan of the new version), keeping every task entry.
 */
export async function recordPlanHash(stateDir: string, cluster: string, planHash: string): Promise<void> {
  const journal = await Journal.open(stateDir, cluster, planHash);
  await journal.flush();
}
