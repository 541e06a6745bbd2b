// `kubemix images push BUNDLE… --registry HOST[:PORT]`: push image bundles
// into a registry under `<registry>/<upstream registry>/<path>` — the layout
// an air-gapped cluster's nodes read (`kubemix up --images` does the same
// into the services registry, through SSH).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../../errors.js';
import { openBundle } from '../../../images/open.js';
import { pushBundles } from '../../../images/push.js';
import { parseInsecureRegistry } from '../../../registry/insecure.js';
import type { CliIo } from '../../io.js';
import { outputFor } from '../../settings.js';
import { clientsFrom, withTransferOptions, type TransferFlags } from './options.js';

interface PushFlags extends TransferFlags {
  readonly registry: string;
  readonly chunkSize?: string;
}

export function registerImagesPush(images: Command, io: CliIo): void {
  withTransferOptions(
    images
      .command('push')
      .description(
        'push image bundles (OCI layout dirs, OCI/docker archives) into a registry, under <registry>/<upstream registry>/<path>',
      )
      .argument('<BUNDLE...>', 'directory or archive: kubemix images pull, ctr export, docker save, skopeo, crane')
      .requiredOption('--registry <HOST[:PORT]>', 'the registry to push into'),
  ).action(async (paths: string[], flags: PushFlags, command: Command) => {
    const out = outputFor(command, io);
    const host = parseInsecureRegistry(flags.registry);
    if (host !== flags.registry.toLowerCase())
      throw new InputError('flags.registry', `--registry ${flags.registry}: expected HOST[:PORT]`, {
        path: '--registry',
      });
    const bundles = [];
    for (const p of paths) bundles.push(await openBundle(resolve(io.cwd, p)));
    const client = clientsFrom(flags, io, io.signal).client(host);
    const report = await pushBundles(bundles, client, {
      report: (e) => {
        if (!out.json && e.kind === 'image') io.stderr(`${e.name}: ${e.action} (${e.digest})\n`);
      },
    });
    if (out.json) out.document({ ok: true, registry: host, ...report });
    else
      out.text(
        `${report.images} image(s) in ${host}: ${report.blobsUploaded} blob(s) uploaded (${report.bytesUploaded} bytes), ${report.blobsMounted} mounted, ${report.blobsPresent} already there; ${report.manifestsPut} manifest(s) put, ${report.manifestsPresent} already there`,
      );
  });
}
