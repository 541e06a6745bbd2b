// Where one attempt of a task spent its time, as kubemix saw it, beside the
// time its scripts ran by the host's own clock. The `done` event carries both,
// so a slow run can be split into the host's work and kubemix's own (a new
// connection, moving the bundle's bytes to the services node, preparing
// files, comparing and sending files, each round trip, keeping captures and
// facts) instead of one number per task. The bundle's bytes (downloads
// fetched or seeded and hashed, the services node's cache filled, images
// pushed) are their own part: their time grows with the bundle and the link,
// not with kubemix, so they must not pass for the executor's cost.

/** The parts of a task's attempt, in the order they happen. */
export const TASK_PHASES = [
  'connect',
  'transfer',
  'prepare',
  'compare',
  'upload',
  'commands',
  'reboot',
  'finish',
] as const;
export type TaskPhase = (typeof TASK_PHASES)[number];
export type PhasesMs = Readonly<Record<TaskPhase, number>>;

export class TaskClock {
  private readonly ms: Record<TaskPhase, number> = {
    connect: 0,
    transfer: 0,
    prepare: 0,
    compare: 0,
    upload: 0,
    commands: 0,
    reboot: 0,
    finish: 0,
  };
  private hostMs: number | undefined = 0;

  /** Runs `work`, adding its wall time to `phase` (also when it throws). */
  async time<T>(phase: TaskPhase, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await work();
    } finally {
      this.ms[phase] += Date.now() - started;
    }
  }

  /**
   * Adds a command's own time on its host; once one command ran without its
   * host reporting a time, the total is unknown.
   */
  host<R extends { readonly hostMs?: number | undefined }>(result: R): R {
    this.hostMs = this.hostMs === undefined || result.hostMs === undefined ? undefined : this.hostMs + result.hostMs;
    return result;
  }

  /** The scripts' time on the host, summed over the check and apply that ran; undefined when a host did not say. */
  get hostTotal(): number | undefined {
    return this.hostMs;
  }

  get phases(): PhasesMs {
    return { ...this.ms };
  }
}
