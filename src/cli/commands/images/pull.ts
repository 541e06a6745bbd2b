// `kubemix images pull SPEC --out DIR`, on a connected machine: every image
// the cluster runs into an OCI image layout directory, from upstream or from
// the spec's mirrors, or from `--registry-mirror REGISTRY=HOST[/PATH]`
// (which wins): a registry standing in for upstream.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../../errors.js';
import { clusterImages, type ClusterImage } from '../../../model/images.js';
import { resolveModel } from '../../../model/resolve.js';
import { pullImages, type PullSource } from '../../../images/pull.js';
import type { CliIo } from '../../io.js';
import { collect } from '../../registry-flags.js';
import { outputFor } from '../../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../../spec-arg.js';
import { clientsFrom, withTransferOptions, type Clients, type TransferFlags } from './options.js';

interface PullFlags extends TransferFlags, SpecOptions {
  readonly out: string;
  readonly registryMirror?: string[];
}

const MIRROR = /^([a-z0-9.-]+(?::\d{1,5})?)=([A-Za-z0-9.-]+(?::\d{1,5})?)(\/[a-z0-9._/-]+)?$/;

export function registerImagesPull(images: Command, io: CliIo): void {
  withTransferOptions(
    withSpecOptions(
      images
        .command('pull')
        .description(
          'write every image the cluster runs into an OCI image layout directory (a bundle for `up --images`)',
        )
        .argument('<SPEC>', 'spec file, or Kubeinit spec string')
        .requiredOption('--out <DIR>', 'the bundle directory (created; a pull that was cut goes on there)')
        .option(
          '--registry-mirror <REGISTRY=HOST[/PATH]>',
          "pull REGISTRY's images from this registry instead (repeatable)",
          collect,
        ),
    ),
  ).action(async (spec: string, flags: PullFlags, command: Command) => {
    const out = outputFor(command, io);
    const model = resolveModel(loadSpec(spec, flags, io));
    const mirrors = new Map<string, string>(
      model.mirrors.images.map((m) => [m.registry, m.mirror.replace(/^https?:\/\//, '')]),
    );
    for (const m of flags.registryMirror ?? []) {
      const parsed = MIRROR.exec(m);
      if (parsed === null)
        throw new InputError('flags.registry-mirror', `--registry-mirror ${m}: expected REGISTRY=HOST[:PORT][/PATH]`, {
          path: '--registry-mirror',
        });
      mirrors.set(parsed[1] ?? '', `${parsed[2] ?? ''}${parsed[3] ?? ''}`);
    }
    const clients = clientsFrom(flags, io, io.signal);
    const list = clusterImages(model);
    const dir = resolve(io.cwd, flags.out);
    const pulled: { image: string; digest: string; blobs: number; bytes: number }[] = [];
    await pullImages(
      list,
      dir,
      (i) => sourceOf(i, mirrors, clients),
      (e) => {
        pulled.push(e);
        if (!out.json) io.stderr(`${e.image}: ${e.digest} (${e.blobs} blob(s), ${e.bytes} bytes fetched)\n`);
      },
    );
    if (out.json) out.document({ ok: true, out: dir, images: pulled });
    else out.text(`${pulled.length} image(s) in ${dir}`);
  });
}

function sourceOf(image: ClusterImage, mirrors: ReadonlyMap<string, string>, clients: Clients): PullSource {
  const mirror = mirrors.get(image.registry);
  if (mirror !== undefined) {
    const [host = '', ...prefix] = mirror.replace(/\/+$/, '').split('/');
    return { client: clients.client(host), repo: [...prefix, image.repository].join('/') };
  }
  // Docker Hub's API lives on another host name.
  const host = image.registry === 'docker.io' ? 'registry-1.docker.io' : image.registry;
  return { client: clients.client(host), repo: image.repository };
}
