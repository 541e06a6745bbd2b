// NodePort from the deployer: GET until every echo pod behind it has
// answered (each at least once: a path to one of them that is broken then
// fails the cell every time, not only when the load balancer picks it), then
// keep answering for the hold window (the judgement the probe pods apply to
// their cells).
import { httpGet, sleep } from './api.js';
import type { RunClusterOptions } from './options.js';
import { CELL_DEADLINE_S, CELL_HOLD, NEVER_ANSWERED, SPREAD_MS } from './probes.js';

type Outcome = { readonly ok: boolean; readonly output: string };

/** The echo pod an answer names (its first line). */
const answerer = (r: Outcome): string => r.output.trim().split('\n')[0]?.trim() ?? '';

export async function probeNodePort(url: string, o: RunClusterOptions, backends: readonly string[]): Promise<Outcome> {
  const until = Date.now() + (o.matrixMs ?? CELL_DEADLINE_S * 1000);
  const pause = o.pollMs ?? 1000;
  const seen = new Set<string>();
  let r = await httpGet(url, 3000);
  for (;;) {
    if (r.ok) seen.add(answerer(r));
    const left = backends.filter((b) => !seen.has(b));
    if (r.ok && left.length === 0) break;
    // Ctrl-C: sleep() throws Aborted, as everywhere in layer 2 (a verdict now would read as a result).
    // Some backends answered and others never did: name them, whether or not the last try was answered
    // (a try the load balancer sent to a silent backend fails: run 24 reported only "no answer").
    if (Date.now() >= until)
      return seen.size > 0 && left.length > 0
        ? { ok: false, output: `${NEVER_ANSWERED} ${left.join(' ')} (answered by: ${[...seen].join(' ')})` }
        : r;
    // An answer, but from a backend already heard: ask again soon (the load
    // balancer picks a backend per connection); no answer: wait the full pause.
    await sleep(r.ok ? Math.min(pause, SPREAD_MS) : pause, o.signal);
    r = await httpGet(url, 3000);
  }
  for (let held = 0; r.ok && held < CELL_HOLD; held++) {
    await sleep(pause, o.signal);
    r = await httpGet(url, 3000);
  }
  return r.ok ? { ok: true, output: [...seen].join(' ') } : r;
}
