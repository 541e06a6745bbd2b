// Retrying what the API server asks to be retried. kube-apiserver's API
// Priority and Fairness answers an overload with 429 TooManyRequests and a
// Retry-After header (seconds); a Status body may carry the same in
// details.retryAfterSeconds. client-go's rest client retries a 429, or a 5xx
// carrying Retry-After, waiting the advertised time, up to a fixed number of
// times (rest.Request's maxRetries, 10 by default). kubemix does the same,
// with a smaller bound and a cap on each wait, because a person is waiting.
import { statusOf } from './client.js';

export interface RetryPolicy {
  /** Retries after the first try. */
  readonly retries: number;
  /** No single wait is longer than this, whatever the server says. */
  readonly capMs: number;
}

export const API_RETRY: RetryPolicy = { retries: 5, capMs: 10_000 };

/** The wait the server asked for, in ms, when `error` is one to retry; undefined otherwise. */
export function retryAfterMs(error: unknown): number | undefined {
  const status = statusOf(error);
  if (status === undefined) return undefined;
  const headers = (error as { headers?: Record<string, string> }).headers ?? {};
  const header = headers['retry-after'];
  let seconds = header !== undefined && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  if (seconds === undefined) {
    const body = (error as { body?: unknown }).body;
    try {
      const doc = (typeof body === 'string' ? JSON.parse(body) : body) as
        { details?: { retryAfterSeconds?: unknown } } | undefined;
      if (typeof doc?.details?.retryAfterSeconds === 'number') seconds = doc.details.retryAfterSeconds;
    } catch {
      // not a Status object
    }
  }
  if (status === 429) return (seconds ?? 1) * 1000;
  if (status >= 500 && seconds !== undefined) return seconds * 1000;
  return undefined;
}

/** Raised instead of the last 429 when the retries are used up: its status and body, and the count. */
export class RetriesExhausted extends Error {
  readonly code: number | undefined;
  readonly body: unknown;
  constructor(
    last: unknown,
    readonly attempts: number,
  ) {
    super(`still refused after ${attempts} tries`);
    this.code = statusOf(last);
    this.body = (last as { body?: unknown }).body;
  }
}

/**
 * `work()`, tried again while the server answers 429 (or a 5xx with
 * Retry-After), waiting what it asks (capped), at most `policy.retries` times.
 * `wait` is the abortable sleep of the caller.
 */
export async function withApiRetries<T>(
  work: () => Promise<T>,
  wait: (ms: number) => Promise<void>,
  policy: RetryPolicy = API_RETRY,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const ms = retryAfterMs(error);
      if (ms === undefined) throw error;
      if (attempt >= policy.retries) throw new RetriesExhausted(error, attempt + 1);
      await wait(Math.min(Math.max(ms, 0), policy.capMs));
    }
  }
}
