// Which hypervisor each VM runs on. Pure and deterministic, and stable as a
// cluster grows: a node's place depends only on the pins, its own group and
// its index in that group, so adding nodes to a group (add-node) or adding a
// group at the end never moves a VM that exists (cleanup would remove it).
//
// - A pin (spec.nodes.placement.<node>, else the group's `hypervisor`) wins.
// - Control-plane nodes, in order, each go to the hypervisor holding the
//   fewest control-plane nodes so far (pinned ones counted first), the
//   earlier hypervisor on a tie: etcd keeps quorum when one hypervisor is
//   lost as soon as no hypervisor holds more than (n - 1) / 2 of them.
// - The services node goes to the last hypervisor: spreading puts the extra
//   controller on the first ones when the count does not divide evenly.
// - Worker group g (0-based, in spec order) places its i-th node on
//   hypervisor (1 + g + i) mod count: round robin from the second
//   hypervisor, each group starting one further, so one-node groups spread.
import type { Role } from '../spec/nodes.js';

export interface PlacementInput {
  readonly name: string;
  readonly role: Role;
  /** Spec path of the group that made the node; workers of one group share it. */
  readonly path?: string;
  readonly pin?: { readonly hypervisor: string; readonly path: string };
}

export function placeOnHypervisors(
  nodes: readonly PlacementInput[],
  hypervisors: readonly string[],
): Map<string, string> {
  const out = new Map<string, string>();
  const last = hypervisors[hypervisors.length - 1];
  if (last === undefined) return out;
  const pinned = (n: PlacementInput) =>
    n.pin !== undefined && hypervisors.includes(n.pin.hypervisor) ? n.pin : undefined;
  const controllers = new Map(hypervisors.map((h) => [h, 0]));
  for (const n of nodes) {
    const pin = pinned(n);
    if (pin === undefined) continue;
    out.set(n.name, pin.hypervisor);
    if (n.role === 'control-plane') controllers.set(pin.hypervisor, (controllers.get(pin.hypervisor) ?? 0) + 1);
  }
  const groups = new Map<string, { ordinal: number; next: number }>();
  for (const n of nodes) {
    const pin = pinned(n);
    if (n.role === 'control-plane' && pin === undefined) {
      const h = fewest(hypervisors, controllers);
      controllers.set(h, (controllers.get(h) ?? 0) + 1);
      out.set(n.name, h);
    } else if (n.role === 'services' && pin === undefined) {
      out.set(n.name, last);
    } else if (n.role === 'worker') {
      const key = n.path ?? '';
      const group = groups.get(key) ?? { ordinal: groups.size, next: 0 };
      groups.set(key, { ordinal: group.ordinal, next: group.next + 1 });
      // A pinned worker still takes its turn, so adding or dropping a pin moves no other node.
      if (pin === undefined)
        out.set(n.name, hypervisors[(1 + group.ordinal + group.next) % hypervisors.length] ?? last);
    }
  }
  return out;
}

/** The hypervisor with the lowest count; the earliest in spec order on a tie. */
function fewest(hypervisors: readonly string[], counts: ReadonlyMap<string, number>): string {
  let best = hypervisors[0] ?? '';
  for (const h of hypervisors) if ((counts.get(h) ?? 0) < (counts.get(best) ?? 0)) best = h;
  return best;
}

export interface PlacementWarning {
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

/**
 * Warns when losing one hypervisor would take etcd below quorum (⌊n/2⌋ + 1
 * of n members, etcd's Raft majority). One or two control-plane nodes have
 * no failure to spread against (two is `nodes.even-control-plane`'s warning).
 */
export function controlPlaneSpread(
  nodes: readonly PlacementInput[],
  placement: ReadonlyMap<string, string>,
  hypervisors: readonly string[],
): PlacementWarning[] {
  const controllers = nodes.filter((n) => n.role === 'control-plane');
  const n = controllers.length;
  if (n < 3 || hypervisors.length === 0) return [];
  const quorum = Math.floor(n / 2) + 1;
  const tolerated = n - quorum;
  const on = (h: string) => controllers.filter((c) => placement.get(c.name) === h);
  const worst = hypervisors.reduce((a, b) => (on(b).length > on(a).length ? b : a));
  const lost = on(worst);
  if (lost.length <= tolerated) return [];
  const needed = hypervisorsNeeded(n, tolerated);
  const names = lost.map((c) => c.name).join(', ');
  const loss = `losing ${worst} (${names}) leaves ${n - lost.length} of ${n} etcd members, below quorum ${quorum}`;
  const pin = lost.find((c) => c.pin !== undefined)?.pin;
  const code = 'placement.control-plane-not-spread';
  if (hypervisors.length < needed || pin === undefined) {
    const over = `${hypervisors.length} hypervisor${hypervisors.length === 1 ? '' : 's'}`;
    const message =
      `${n} control-plane nodes cannot be spread over ${over}: ${loss}; ` +
      `surviving the loss of one hypervisor needs ${needed}`;
    return [{ code, path: 'spec.infrastructure.hypervisors', message }];
  }
  const message =
    `the pins put ${lost.length} control-plane nodes on ${worst}: ${loss}; ` +
    'pin them to different hypervisors or let kubemix spread them';
  return [{ code, path: pin.path, message }];
}

/** The fewest hypervisors over which n controllers lose at most `tolerated` with any one hypervisor. */
function hypervisorsNeeded(n: number, tolerated: number): number {
  let k = 1;
  while (Math.ceil(n / k) > tolerated) k += 1;
  return k;
}
