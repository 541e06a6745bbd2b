// The test renderer: keeps every event, serialised exactly as a subscriber
// sees it (after redaction), so tests can assert on the stream.
import type { ExecEvent } from './events.js';

export class EventRecorder {
  readonly events: ExecEvent[] = [];
  readonly listener = (e: ExecEvent): void => void this.events.push(e);

  ofType<T extends ExecEvent['type']>(type: T): Extract<ExecEvent, { type: T }>[] {
    return this.events.filter((e): e is Extract<ExecEvent, { type: T }> => e.type === type);
  }

  /** One line per event without timing, for snapshots. */
  serialise(): string {
    return this.events.map(({ t: _t, ...rest }) => JSON.stringify(rest)).join('\n');
  }
}
