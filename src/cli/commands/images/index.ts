// `kubemix images list|pull|push`: the images a cluster runs, a bundle of
// them written on a connected machine, and that bundle pushed into a registry
// (the services node's, which `kubemix up --images` does itself).
import type { Command } from 'commander';
import { clusterImages, type ClusterImage } from '../../../model/images.js';
import { resolveModel } from '../../../model/resolve.js';
import type { CliIo } from '../../io.js';
import { table } from '../../render-plan.js';
import { outputFor } from '../../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../../spec-arg.js';
import { registerImagesPull } from './pull.js';
import { registerImagesPush } from './push.js';

export function registerImages(program: Command, io: CliIo): void {
  const images = program
    .command('images')
    .description('the images a cluster runs: list them, pull a bundle (connected machine), push a bundle');
  withSpecOptions(
    images
      .command('list')
      .description('every image the cluster runs, with the platforms its nodes pull and digests where pinned')
      .argument('<SPEC>', 'spec file, or Kubeinit spec string'),
  ).action((spec: string, opts: SpecOptions, command: Command) => {
    const out = outputFor(command, io);
    const model = resolveModel(loadSpec(spec, opts, io));
    const list = clusterImages(model);
    if (out.json) {
      out.document({ ok: true, cluster: model.cluster.name, images: list });
      return;
    }
    out.text(listText(list, model.overlay.plugin === 'calico'));
  });
  registerImagesPull(images, io);
  registerImagesPush(images, io);
}

function listText(list: readonly ClusterImage[], calico: boolean): string {
  const rows = list.map((i) => [i.ref, i.platforms.join(', '), i.usedBy.join(', ')]);
  const note = calico
    ? "\nCalico's operator pulls its own images (not listed: the operator's manifest names them at deploy time).\n"
    : '';
  return `${table([['IMAGE', 'PLATFORMS', 'USED BY'], ...rows])}\n${list.length} images${note}`;
}
