/** How the real-cluster tier runs kubectl: which failures it tries again, and how long one run may take. */

/** kubectl's answers that mean the request never reached the API server: tried again, as an operator would. */
export const UNREACHABLE = /Unable to connect to the server[^\n]*|the server is currently unable to handle the request/;
/**
 * Answers of an API server too busy to finish in time (its own 60 s limit, etcd's request deadline): a read
 * is tried again, as an operator would (run 20: `get nodes` timed out right after the join, on a control
 * plane at load 18). A write is not: it may have been done.
 */
export const BUSY =
  /Error from server \(Timeout\)[^\n]*|etcdserver: request timed out|net\/http: TLS handshake timeout/;
export const isRead = (args: readonly string[]): boolean =>
  args[0] === 'get' || args[0] === 'wait' || (args[0] === 'rollout' && args[1] === 'status');
export const KUBECTL_ATTEMPTS = 7;
/**
 * How long the kubectl process may run: its own `--timeout=` plus a minute to report, else 5 min
 * (run 26: a 300 s limit cut `rollout status --timeout=900s` short, so guard's slow start was never seen).
 */
export function kubectlLimitMs(args: readonly string[]): number {
  const given = args.map((a) => /^--timeout=(\d+)(s|m)$/.exec(a)).find((m) => m !== null);
  if (given === undefined || given === null) return 300_000;
  return Number(given[1]) * (given[2] === 'm' ? 60_000 : 1000) + 60_000;
}
