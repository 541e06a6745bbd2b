import { HostError } from '../errors.js';

/**
 * The connection to a host failed or broke. `transient` errors (reset,
 * timeout, refused while rebooting) are retried by the executor with backoff.
 */
export class TransportError extends HostError {
  readonly host: string;
  readonly transient: boolean;

  constructor(host: string, message: string, transient: boolean, cause?: unknown) {
    super(
      transient ? 'host.unreachable' : 'host.transport',
      `${host}: ${message}`,
      cause === undefined ? { path: host } : { path: host, cause },
    );
    this.host = host;
    this.transient = transient;
  }
}

/** The host offered a key we refuse (unknown without --trust-new-hosts, changed, or revoked). */
export class HostKeyError extends HostError {
  constructor(host: string, message: string, hint?: string) {
    super('host.key-refused', message, hint === undefined ? { path: host } : { path: host, hint });
  }
}

export function isTransient(error: unknown): boolean {
  return error instanceof TransportError && error.transient;
}
