// Where every box of the topology picture goes. Pure arithmetic on the
// model: hypervisors (or the existing hosts) are columns, their guests are
// stacked in sub-columns of at most ROWS boxes, so boxes never overlap.
import { driverFor } from '../../drivers/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { PlanNode } from '../../model/types.js';

export const NODE_W = 230;
export const NODE_H = 84;
export const GAP = 16;
export const ROWS = 6;
export const PAD = 24;

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface Column {
  readonly name: string;
  readonly address?: string;
  readonly box: Box;
  readonly nodes: readonly { readonly node: PlanNode; readonly box: Box }[];
}

export interface Layout {
  readonly width: number;
  readonly columns: readonly Column[];
  /** Top of the physical area (below the title). */
  readonly top: number;
  /** Bottom of the hypervisor columns. */
  readonly physicalBottom: number;
}

export function layoutTopology(model: ClusterModel, top: number): Layout {
  const groups = columnsOf(model);
  const tallest = Math.max(1, ...groups.map((g) => Math.min(ROWS, g.nodes.length)));
  const colH = 40 + tallest * (NODE_H + GAP);
  let x = PAD;
  const columns = groups.map((g): Column => {
    const sub = Math.max(1, Math.ceil(g.nodes.length / ROWS));
    const w = sub * (NODE_W + GAP) + GAP;
    const nodes = g.nodes.map((node, i) => ({
      node,
      box: {
        x: x + GAP + Math.floor(i / ROWS) * (NODE_W + GAP),
        y: top + 36 + (i % ROWS) * (NODE_H + GAP),
        w: NODE_W,
        h: NODE_H,
      },
    }));
    const column: Column = {
      name: g.name,
      ...(g.address === undefined ? {} : { address: g.address }),
      box: { x, y: top, w, h: colH },
      nodes,
    };
    x += w + GAP * 2;
    return column;
  });
  return { width: Math.max(x - GAP * 2 + PAD, 980), columns, top, physicalBottom: top + colH };
}

function columnsOf(model: ClusterModel): { name: string; address?: string; nodes: PlanNode[] }[] {
  return driverFor(model.cluster.driver)
    .placements(model)
    .map((p) => ({
      name: p.name,
      ...(p.address === undefined ? {} : { address: p.address }),
      nodes: model.nodes.filter((n) => p.nodes.includes(n.name)),
    }));
}
