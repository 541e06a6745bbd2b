// `kubemix routes SPEC`: the static pod routes of the upstream L3 routing
// topology (for the top-of-rack router) and, with host-gw, per node.
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { ciscoRoutes, hostGwRoutes, ipBatch, torRoutes, type PodRoute } from '../../interop/routes/routes.js';
import { resolveModel } from '../../model/resolve.js';
import type { CliIo } from '../io.js';
import { table } from '../render-plan.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

const FORMATS = ['table', 'ip', 'cisco'] as const;

export function registerRoutes(program: Command, io: CliIo): void {
  withSpecOptions(
    program
      .command('routes')
      .description(
        'static routes for the pod network: top-of-rack (each pod CIDR → its node) and, with host-gw, per node',
      )
      .argument('<SPEC>', 'spec file, or Kubeinit spec string')
      .option('--format <FORMAT>', 'table, ip (ip -batch) or cisco', 'table')
      .option('--node <NAME>', "with --format ip or cisco: the host-gw routes of this node instead of the router's"),
  ).action((spec: string, opts: SpecOptions & { format: string; node?: string }, command: Command) => {
    const out = outputFor(command, io);
    if (!(FORMATS as readonly string[]).includes(opts.format))
      throw new InputError('flags.invalid', `--format ${opts.format}: use ${FORMATS.join(', ')}`, { path: '--format' });
    const model = resolveModel(loadSpec(spec, opts, io));
    const tor = torRoutes(model);
    const perNode = hostGwRoutes(model);
    if (out.json) {
      out.document({ ok: true, topRouter: tor, hostGw: perNode });
      return;
    }
    if (opts.format === 'table') {
      out.text(tableText(tor, perNode));
      return;
    }
    let routes: readonly PodRoute[] = tor;
    let title = `top-of-rack routes for cluster ${model.cluster.name} (upstream L3 routing)`;
    if (opts.node !== undefined) {
      const mine = perNode.find((n) => n.node === opts.node);
      if (mine === undefined)
        throw new InputError(
          'routes.node',
          `${opts.node}: no host-gw routes (not a node, or the backend is not host-gw)`,
          { path: '--node' },
        );
      routes = mine.routes;
      title = `flannel host-gw routes on ${opts.node}`;
    }
    out.text(opts.format === 'ip' ? ipBatch(routes, title) : ciscoRoutes(routes, title));
  });
}

function tableText(tor: readonly PodRoute[], perNode: ReturnType<typeof hostGwRoutes>): string {
  const mark = (r: PodRoute) => (r.predicted ? 'predicted' : '');
  const parts = [
    'top-of-rack router (upstream L3 routing):',
    table([['destination', 'via', 'node', 'pod CIDR'], ...tor.map((r) => [r.destination, r.via, r.node, mark(r)])]),
  ];
  if (perNode.length > 0) {
    parts.push('', 'per-node routes (flannel host-gw):');
    parts.push(
      table([
        ['on node', 'destination', 'via', 'pod CIDR'],
        ...perNode.flatMap((n) => n.routes.map((r) => [n.node, r.destination, r.via, mark(r)])),
      ]),
    );
  }
  return parts.join('\n');
}
