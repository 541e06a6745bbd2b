// `kubemix up` on an air-gapped plan, before any node is touched: every node
// download must be had without the network (its hash pinned, read before or
// in a checksum file beside it, and its file in the deployer's cache or the
// --downloads directory), and every image the nodes pull must be in a bundle
// given with --images or already in the services registry (what an earlier
// `up` pushed, as the state directory records); verify's probe images as
// `--probe-image` sets them. Whatever is missing is named,
// and `up` stops with exit 2.
import { resolve, join } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import { DownloadCache } from '../exec/downloads.js';
import { pushedImages } from '../exec/image-push.js';
import type { BundleImage } from '../images/bundle.js';
import { openBundle } from '../images/open.js';
import { withProbeImages, type ClusterImage } from '../model/images.js';
import type { Plan } from '../plan/types.js';
import { parseProbeImageOverrides } from '../verify/cluster/images.js';
import type { CliIo } from './io.js';

/** A bundle image stands for a planned one: same name, or same repository and tag (and the pinned digest). */
export function imageIn(i: ClusterImage, bundle: readonly BundleImage[]): boolean {
  const repo = `${i.registry}/${i.repository}`;
  return bundle.some(
    (b) =>
      b.name === i.ref ||
      (i.tag !== undefined && b.name === `${repo}:${i.tag}` && (i.digest === undefined || b.top.digest === i.digest)) ||
      (i.digest !== undefined && b.top.digest === i.digest && b.name.startsWith(`${repo}`)),
  );
}

/** `--downloads` and `--images`: what an air-gapped site hands over (`up`, and `upgrade` for the target release). */
export function withAirGapOptions(command: Command): Command {
  return command
    .option(
      '--downloads <dir>',
      'seed the download cache from this directory (air-gapped sites); every file is still checked against its SHA256',
    )
    .option(
      '--images <bundle...>',
      "image bundles (OCI layout dirs, OCI/docker archives) to push into the services node's registry (air-gapped clusters)",
    );
}

export async function airGapPreflight(
  plan: Plan,
  stateDir: string,
  flags: { readonly images?: readonly string[]; readonly downloads?: string; readonly probeImage?: readonly string[] },
  io: CliIo,
): Promise<void> {
  if (plan.images === undefined) return;
  // `up --probe-image`: its verify pulls the given probe, not the default.
  const images = withProbeImages(plan.images, parseProbeImageOverrides(flags.probeImage ?? []));
  const problems: string[] = [];
  const bundled: BundleImage[] = [];
  for (const path of flags.images ?? []) bundled.push(...(await openBundle(resolve(io.cwd, path))).images);
  const pushed = await pushedImages(stateDir);
  for (const i of images)
    if (!imageIn(i, bundled) && pushed[i.ref] === undefined)
      problems.push(`image ${i.ref} (${i.usedBy.join(', ')}): in no --images bundle and not pushed before`);
  // Read only: a refused command leaves the state directory as it found it.
  const cache = await DownloadCache.read({
    dir: join(stateDir, 'downloads'),
    seed: flags.downloads === undefined ? undefined : resolve(io.cwd, flags.downloads),
    fetcher: async (url) => {
      throw new Error(`no network before the air-gap check: ${url}`);
    },
    signal: io.signal,
    report: () => undefined,
  });
  for (const d of plan.downloads ?? []) {
    const problem = await cache.offlineProblem(d);
    if (problem !== undefined) problems.push(`download ${d.id} (${d.name} ${d.version}): ${problem}`);
  }
  if (problems.length > 0)
    throw new InputError(
      'airgap.missing',
      `the cluster is air-gapped and ${problems.length} thing(s) it needs are not here; no node was touched:\n  ${problems.join('\n  ')}`,
      {
        path: '--images',
        hint: 'on a connected machine: kubemix images pull SPEC --out BUNDLE, and put the release files (with their checksum files) in a directory; then pass them here: --images BUNDLE --downloads DIR (kubemix up or kubemix upgrade)',
      },
    );
}
