// Whether verify can run anything on a node at all, asked once per node
// before its probes: a node that cannot be reached over SSH (or where a
// command as root fails) is ONE failure naming the node and what to do, and
// every cell from or to it is skipped with that reason — not a wall of
// cells each blaming the network (every UDP cell read "UDP 4789 rejected on
// the path" when no node could be reached, issue 31). Pure.
import { checkId, type CheckResult } from '../types.js';
import type { Probe } from './plan.js';

/** The probe name of the one result per unreachable node (`underlay/ssh/deployer/<node>`). */
export const REACH_PROBE = 'ssh';
/** The source of that result: the deployer is the one that could not reach the node. */
export const DEPLOYER = 'deployer';

/** What the runner saw when it tried a trivial command as root on the node. */
export type Reach =
  | { readonly ok: true }
  | { readonly ok: false; readonly how: 'connect'; readonly reason: string }
  | { readonly ok: false; readonly how: 'root'; readonly reason: string };

/** The one failure for a node verify cannot run commands on, with the count of cells it stops. */
export function unreachableResult(node: string, reach: Reach & { ok: false }, blocked: number): CheckResult {
  const cells = `${blocked} check${blocked === 1 ? '' : 's'} from or to it not run`;
  const connect = reach.how === 'connect';
  return {
    id: checkId('underlay', REACH_PROBE, DEPLOYER, node),
    layer: 'underlay',
    probe: REACH_PROBE,
    source: DEPLOYER,
    target: node,
    status: 'fail',
    detail: connect
      ? `cannot reach node ${node} over SSH: ${reach.reason}; ${cells}`
      : `reached node ${node} over SSH, but a command as root fails there: ${reach.reason}; ${cells}`,
    command: connect ? `ssh ${node} (connect, host key check, login)` : `ssh ${node}: exit 0 as root`,
    cause: connect
      ? `check that ${node} is up, that its address, port, user and key in the spec are right and sshd runs on it, and that its host key is in the known_hosts file (or pass --trust-new-hosts on first contact); then run verify again`
      : `let the SSH user of ${node} run commands as root without a password (sudo NOPASSWD, or log in as root / an Administrator); then run verify again`,
  };
}

/** Why a cell did not run: the node it needs could not be reached. */
export function blockedReason(node: string): string {
  return `cannot reach ${node} over SSH (see underlay ssh ${DEPLOYER} → ${node})`;
}

/** A probe that did not run, and why. */
export function skippedResult(p: Probe, detail: string): CheckResult {
  return {
    id: p.id,
    layer: 'underlay',
    probe: p.probe,
    source: p.source.name,
    target: p.target,
    status: 'skip',
    detail,
  };
}

/** A probe skipped because `node` (its source, or the target whose listener it needs) cannot be reached. */
export function blockedResult(p: Probe, node: string): CheckResult {
  return skippedResult(p, blockedReason(node));
}
