// The journal: every task's state with its input hash and the plan hash.
// On disk: journal.json, a snapshot rewritten durably (temp + fsync + rename +
// dir fsync) when a run opens and closes the journal, and journal.log, the
// records made since, one JSON line each, appended and fdatasync'ed before a
// durable record returns. Concurrent records share one append and one sync
// (group commit), so a commit costs one small write however many tasks the
// journal holds. `kill -9` at any moment loses nothing already reported done:
// a torn last line of the log is a record that was never acknowledged.
import { open, rm, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { syncDir, writeFileDurable } from './durable.js';
import { statePaths } from './state-dir.js';
import { damaged, parseStateJson, readStateText, type StateFile } from './state-file.js';

export const TASK_STATES = ['pending', 'running', 'retrying', 'done', 'failed', 'skipped', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];

const entrySchema = z.object({
  state: z.enum(TASK_STATES),
  host: z.string(),
  inputHash: z.string(),
  attempts: z.number().int().min(0),
  changed: z.boolean().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  error: z.string().optional(),
});
const journalSchema = z.object({
  version: z.literal(1),
  cluster: z.string(),
  planHash: z.string(),
  updatedAt: z.string(),
  // A null-prototype record: a task id `__proto__` is an entry like any other.
  tasks: z.record(z.string(), entrySchema).transform((t) => Object.assign(Object.create(null) as typeof t, t)),
});
const recordSchema = z.object({ id: z.string(), entry: entrySchema });

const HINT =
  'remove journal.json and journal.log to start over: every task runs again, and its check skips what is already in place';
const journalFile = (path: string): StateFile<z.output<typeof journalSchema>> => ({
  path,
  schema: journalSchema,
  code: 'state.journal',
  hint: HINT,
});

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

/** One line of journal.log. */
interface LogRecord {
  readonly id: string;
  readonly entry: JournalEntry;
}

export class Journal {
  private tasks: Record<string, JournalEntry> = {};
  /** Ids recorded since the last append. */
  private dirty = new Set<string>();
  private log: FileHandle | undefined;
  private requested = 0;
  private written = 0;
  private writing: Promise<void> | undefined;

  private constructor(
    private readonly stateDir: string,
    private readonly cluster: string,
    private readonly planHash: string,
  ) {}

  get path(): string {
    return statePaths(this.stateDir).journal;
  }

  /**
   * Loads snapshot and log. `write` (the default) compacts them into a new
   * snapshot and starts an empty log; `read` (--check) leaves the files alone.
   */
  static async open(
    stateDir: string,
    cluster: string,
    planHash: string,
    mode: 'write' | 'read' = 'write',
  ): Promise<Journal> {
    const journal = new Journal(stateDir, cluster, planHash);
    const doc = await loadJournal(stateDir);
    if (doc?.version === 1) journal.tasks = { ...doc.tasks };
    if (mode === 'write') {
      journal.log = await open(statePaths(stateDir).journalLog, 'a', 0o600);
      await syncDir(stateDir);
      await journal.compact();
    }
    return journal;
  }

  entry(id: string): JournalEntry | undefined {
    return this.tasks[id];
  }

  /** Ids of the tasks recorded done (with any input). */
  doneIds(): string[] {
    return Object.entries(this.tasks)
      .filter(([, e]) => e.state === 'done')
      .map(([id]) => id)
      .sort();
  }

  /** Done with this exact input: may be skipped. */
  isDone(id: string, inputHash: string): boolean {
    const e = this.tasks[id];
    return e?.state === 'done' && e.inputHash === inputHash;
  }

  /** Records a state; `durable` waits until it is on disk (with every record made before it). */
  async record(id: string, entry: JournalEntry, durable = true): Promise<void> {
    this.tasks[id] = entry;
    this.dirty.add(id);
    if (durable) await this.flush();
  }

  async flush(): Promise<void> {
    const generation = ++this.requested;
    while (this.written < generation) {
      if (!this.writing) {
        const target = this.requested;
        this.writing = this.append()
          .then(() => void (this.written = target))
          .finally(() => (this.writing = undefined));
      }
      await this.writing;
    }
  }

  /** Writes what is pending, folds the log into the snapshot and removes the log. */
  async close(): Promise<void> {
    if (this.log === undefined) return;
    await this.flush();
    await this.compact();
    await this.log.close();
    this.log = undefined;
    await rm(statePaths(this.stateDir).journalLog, { force: true });
    await syncDir(this.stateDir);
  }

  private async append(): Promise<void> {
    if (this.dirty.size === 0) return;
    if (this.log === undefined) throw new Error('journal opened read-only');
    const lines = [...this.dirty].map((id) => `${JSON.stringify({ id, entry: this.tasks[id] })}\n`).join('');
    this.dirty.clear();
    await this.log.write(lines);
    await this.log.datasync();
  }

  /** A durable snapshot of every entry; the log may then be truncated (replaying it again changes nothing). */
  private async compact(): Promise<void> {
    const doc: JournalDocument = {
      version: 1,
      cluster: this.cluster,
      planHash: this.planHash,
      updatedAt: new Date().toISOString(),
      tasks: this.tasks,
    };
    await writeFileDurable(this.path, `${JSON.stringify(doc, null, 1)}\n`, 0o600);
    this.dirty.clear();
    if (this.log !== undefined) {
      await this.log.truncate(0);
      await this.log.datasync();
    }
  }
}

/** Applies journal.log's complete lines; a torn last line (kill -9 mid-append) was never acknowledged. */
function replay(tasks: Record<string, JournalEntry>, text: string, path: string): void {
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, i) => {
    const file = { path, schema: recordSchema, code: 'state.journal', hint: HINT };
    try {
      const r = parseStateJson(file, line) as LogRecord;
      tasks[r.id] = r.entry;
    } catch (error) {
      throw damaged(file, `line ${i + 1}: ${(error as Error).message.replace(`cannot read ${path}: `, '')}`);
    }
  });
}

/**
 * Snapshot plus log as one document. The log is only ever started after a
 * snapshot was written, so a log without a snapshot (someone removed
 * journal.json to start over) is ignored.
 */
async function loadJournal(stateDir: string): Promise<JournalDocument | undefined> {
  const paths = statePaths(stateDir);
  const text = readStateText(journalFile(paths.journal));
  if (text === undefined) return undefined;
  const doc = parseStateJson(journalFile(paths.journal), text) as JournalDocument;
  const log = readStateText(journalFile(paths.journalLog));
  if (log === undefined || log === '') return doc;
  const tasks = { ...doc.tasks };
  replay(tasks, log, paths.journalLog);
  return { ...doc, tasks };
}

/**
 * The journal of a state directory as last written, for reports (`status`,
 * `add-node`); undefined when nothing was ever run there.
 */
export async function readJournal(stateDir: string): Promise<JournalDocument | undefined> {
  return loadJournal(stateDir);
}

/**
 * Makes the journal name `planHash` as the plan it belongs to (after an
 * upgrade: the deploy plan of the new version), keeping every task entry.
 */
export async function recordPlanHash(stateDir: string, cluster: string, planHash: string): Promise<void> {
  const journal = await Journal.open(stateDir, cluster, planHash);
  await journal.flush();
}
