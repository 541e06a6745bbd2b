// NodePort from the deployer: GET until it answers, then keep answering for
// the hold window (the judgement the probe pods apply to their cells).
import { httpGet, sleep } from './api.js';
import type { RunClusterOptions } from './options.js';
import { CELL_DEADLINE_S, CELL_HOLD } from './probes.js';

export async function probeNodePort(url: string, o: RunClusterOptions): Promise<{ ok: boolean; output: string }> {
  const until = Date.now() + (o.matrixMs ?? CELL_DEADLINE_S * 1000);
  let r = await httpGet(url, 3000);
  while (!r.ok && Date.now() < until && !o.signal.aborted) {
    await sleep(o.pollMs ?? 1000, o.signal);
    r = await httpGet(url, 3000);
  }
  for (let held = 0; r.ok && held < CELL_HOLD; held++) {
    await sleep(o.pollMs ?? 1000, o.signal);
    r = await httpGet(url, 3000);
  }
  return r;
}
