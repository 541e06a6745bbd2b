// How long guard may take to decide: the API server says how long it waits in
// the call's `timeout` query parameter (a Go duration, the webhook's
// timeoutSeconds: "10s", "30s"). Answering after that helps no one, answering
// 503 well before it throws away time a slow node needed (a webhook installed
// with --timeout 30 was still cut at guard's own 9 s).

const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
  us: 0.001,
  µs: 0.001,
  ns: 1e-6,
};
const GO_DURATION = /^(?:\d+(?:\.\d+)?(?:h|ms|m|s|us|µs|ns))+$/;
const PART = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g;
/** The webhook API allows 1 to 30 s. */
const MAX_MS = 30_000;

/** A Go duration string in milliseconds, or undefined when it is not one. */
export function goDurationMs(text: string): number | undefined {
  if (!GO_DURATION.test(text)) return undefined;
  let ms = 0;
  for (const [, value, unit] of text.matchAll(PART)) ms += Number(value) * (UNIT_MS[unit ?? ''] ?? 0);
  return ms;
}

/**
 * The time left for a decision: the caller's timeout less a margin for the
 * answer to travel back (a tenth, at most 1 s), or `fallbackMs` when the call
 * names no usable timeout.
 */
export function decisionDeadlineMs(timeoutParam: string | null, fallbackMs: number): number {
  const asked = timeoutParam === null ? undefined : goDurationMs(timeoutParam);
  if (asked === undefined || asked <= 0) return fallbackMs;
  const within = Math.min(asked, MAX_MS);
  return Math.max(1, Math.round(within - Math.min(1_000, within / 10)));
}
