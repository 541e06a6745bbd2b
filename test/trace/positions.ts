// Where things happen in a trace, by step index: the questions the trace
// tests ask ("did X's apply come before Y's first command?").
import type { Trace } from './run-trace.js';
import type { StepKind, TraceStep } from './recording-target.js';

export class Positions {
  constructor(private readonly trace: Trace) {}

  private indices(task: string, kind?: StepKind): number[] {
    const out: number[] = [];
    this.trace.steps.forEach((s, i) => {
      if (s.task === task && (kind === undefined || s.kind === kind)) out.push(i);
    });
    if (out.length === 0) throw new Error(`${this.trace.example}: ${task} has no ${kind ?? ''} step in the trace`);
    return out;
  }

  /** Index of the task's first command: nothing of it reached the host before. */
  first(task: string): number {
    return Math.min(...this.indices(task));
  }

  /** Index of the task's last command (its apply, or the capture after it). */
  last(task: string): number {
    return Math.max(...this.indices(task));
  }

  one(task: string, kind: StepKind): number {
    const [i, ...more] = this.indices(task, kind);
    if (i === undefined || more.length > 0)
      throw new Error(`${this.trace.example}: ${task} has ${more.length + 1} ${kind} steps`);
    return i;
  }

  stepsOf(task: string): TraceStep[] {
    return this.indices(task).map((i) => this.trace.steps[i] as TraceStep);
  }

  /** Task ids in the order their first command reached a host. */
  taskOrder(): string[] {
    return [...new Set(this.trace.steps.map((s) => s.task))];
  }
}
