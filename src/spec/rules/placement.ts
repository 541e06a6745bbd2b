// Placement pins: every pin names a hypervisor of the spec, and every node
// named in spec.nodes.placement is one the spec makes.
import type { Diagnostic } from '../../errors.js';
import { didYouMean } from '../suggest.js';
import { error, type Rule, type RuleContext } from './context.js';

/** Every pin in the spec with the path that sets it. */
function pins(ctx: RuleContext): { hypervisor: string; path: string }[] {
  const { spec } = ctx;
  const out: { hypervisor: string; path: string }[] = [];
  const add = (hypervisor: string | undefined, path: string) => {
    if (hypervisor !== undefined) out.push({ hypervisor, path });
  };
  add(spec.controlPlane.hypervisor, 'spec.nodes.controlPlane.hypervisor');
  spec.workers.forEach((g, i) => add(g.hypervisor, `spec.nodes.workers[${i}].hypervisor`));
  add(spec.services.hypervisor, 'spec.services.hypervisor');
  for (const [node, hypervisor] of Object.entries(spec.placement)) add(hypervisor, `spec.nodes.placement.${node}`);
  return out;
}

export const placementPins: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  const names = ctx.spec.hypervisors.map((h) => h.name);
  for (const pin of pins(ctx)) {
    if (names.includes(pin.hypervisor)) continue;
    if (names.length === 0) {
      out.push(
        error(
          'placement.unknown-hypervisor',
          pin.path,
          `"${pin.hypervisor}" is not a hypervisor: this spec has none (only the libvirt driver places VMs)`,
          'remove the pin',
        ),
      );
      continue;
    }
    const guess = didYouMean(pin.hypervisor, names);
    const suggestion = guess === undefined ? '' : ` (did you mean "${guess}"?)`;
    out.push(
      error(
        'placement.unknown-hypervisor',
        pin.path,
        `"${pin.hypervisor}" is not one of spec.infrastructure.hypervisors${suggestion}`,
        `pin to one of: ${names.join(', ')}`,
      ),
    );
  }
  const nodes = ctx.nodes.map((n) => n.name);
  for (const node of Object.keys(ctx.spec.placement)) {
    if (nodes.includes(node)) continue;
    const guess = didYouMean(node, nodes);
    out.push(
      error(
        'placement.unknown-node',
        `spec.nodes.placement.${node}`,
        `the spec makes no node "${node}"${guess === undefined ? '' : ` (did you mean "${guess}"?)`}`,
        'node names are <group name>-01, -02, …: controller-01, compute-02, service-01',
      ),
    );
  }
  return out;
};

/**
 * Two hypervisors that are one libvirt daemon (the same address and
 * connection URI): each is prepared, filled and cleaned up as if it were
 * alone, so the cleanup of one destroys the other's guests and disks.
 * Addresses are compared as written (lower case): a name and an IP of the
 * same machine are not told apart here.
 */
export const distinctHypervisors: Rule = (ctx) => {
  const seen = new Map<string, string>();
  const out: Diagnostic[] = [];
  ctx.spec.hypervisors.forEach((h, i) => {
    const key = `${h.address.toLowerCase()} ${h.libvirtUri}`;
    const first = seen.get(key);
    if (first === undefined) return void seen.set(key, h.name);
    out.push(
      error(
        'placement.hypervisor-duplicate',
        `spec.infrastructure.hypervisors[${i}].address`,
        `${h.name} is the same libvirt daemon as ${first} (${h.address}, ${h.libvirtUri}): the cleanup of one would destroy the other's guests and disks`,
        'list each hypervisor once; several libvirt daemons on one host need distinct libvirtUri values',
      ),
    );
  });
  return out;
};
