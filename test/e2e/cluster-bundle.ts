// What the real-cluster tier hands kubemix, the way an operator of an
// air-gapped site hands over a bundle: per Kubernetes release, the folder the
// images recipe builds from the Go module proxy and Debian's packages
// (gobuild/build.sh images-<minor>: release/ — node downloads under upstream's
// file names with upstream's checksum files beside them — and images/ — one
// OCI image archive per image kubeadm and kubemix's manifests name), kubemix's
// own image (gobuild/guard-image.sh), and the probe image verify runs. The spec
// pins each node download's SHA256 (these builds are not upstream's bytes),
// `up --downloads` seeds the deployer's cache from release/, `up --images`
// pushes the archives into the services node's registry.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { ClusterModel } from '../../src/model/resolve.js';
import { assemblePlan } from '../../src/plan/assemble.js';
import { repoPath } from '../helpers/cli.js';

export interface ReleaseBundle {
  readonly minor: string;
  readonly folder: string;
  /** Node downloads under upstream's file names (`up --downloads`). */
  readonly release: string;
  /** OCI image archives (`up --images`). */
  readonly images: readonly string[];
}

/** Builds (once; then from the machine's cache) and returns the recipes' folders, one per recipe, in order. */
export function gobuild(recipes: readonly string[], log: (line: string) => void = () => undefined): string[] {
  const started = Date.now();
  const out = execFileSync('bash', [repoPath('gobuild', 'build.sh'), ...recipes], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  log(`gobuild ${recipes.join(' ')}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return out.trim().split('\n');
}

export function releaseBundle(minor: string, log?: (line: string) => void): ReleaseBundle {
  const [folder = ''] = gobuild([`images-${minor}`], log);
  const images = join(folder, 'images');
  return {
    minor,
    folder,
    release: join(folder, 'release'),
    images: readdirSync(images)
      .filter((f) => f.endsWith('.tar'))
      .sort()
      .map((f) => join(images, f)),
  };
}

/** The digest in an upstream checksum file: a bare hash, or `<hash>  <name>` lines. */
function publishedSha256(release: string, file: string): string | undefined {
  for (const suffix of ['.sha256', '.sha256sum']) {
    const sidecar = join(release, `${file}${suffix}`);
    if (existsSync(sidecar)) {
      const text = readFileSync(sidecar, 'utf8');
      const line = text.split('\n').find((l) => l.includes(file)) ?? text.split('\n')[0] ?? '';
      return /^[0-9a-f]{64}/.exec(line.trim())?.[0];
    }
  }
  // runc publishes one runc.sha256sum for all its assets.
  const all = join(release, 'runc.sha256sum');
  if (existsSync(all))
    return readFileSync(all, 'utf8')
      .split('\n')
      .find((l) => l.trim().endsWith(` ${file}`) || l.trim().endsWith(`*${file}`))
      ?.slice(0, 64);
  return undefined;
}

/**
 * `spec.downloads` pins for every node download the plan of `model` names,
 * from the bundle's checksum files, by the file name of the download's URL.
 * A download the bundle lacks is an error naming it.
 */
export function downloadPins(model: ClusterModel, bundle: ReleaseBundle): Record<string, { sha256: string }> {
  const planned = assemblePlan(model).plan.downloads ?? [];
  const pins: Record<string, { sha256: string }> = {};
  const missing: string[] = [];
  for (const d of planned) {
    if (d.id.startsWith('images/')) continue;
    const file = basename(new URL(d.url).pathname);
    const sha256 = existsSync(join(bundle.release, file)) ? publishedSha256(bundle.release, file) : undefined;
    if (sha256 === undefined) missing.push(`${d.id} (${file})`);
    else pins[d.id] = { sha256 };
  }
  if (missing.length > 0) throw new Error(`${bundle.release} lacks ${missing.join(', ')}`);
  return pins;
}

/** kubemix's own image for `guard install`, built from this checkout: [archive, reference]. */
export function guardImage(out: string, log?: (line: string) => void): { archive: string; ref: string } {
  const started = Date.now();
  const line = execFileSync('bash', [repoPath('gobuild', 'guard-image.sh'), out], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  log?.(`guard image: ${((Date.now() - started) / 1000).toFixed(0)} s`);
  // MANIFEST line: image REF FILE SHA256 DIGEST
  const [, ref = '', file = ''] = line.trim().split('\n').pop()?.split(' ') ?? [];
  return { archive: join(out, file), ref };
}

/**
 * verify's probe image for Linux, built here: BusyBox from Debian 12's
 * busybox-static (the sh, httpd, wget, nslookup and nc the probe pods run;
 * verify's default, docker.io/library/busybox:1.37.0 pinned by digest, cannot
 * be had here), every applet linked beside the binary. Named in kubemix's own
 * namespace on Docker Hub, so it is pulled through the cluster's docker.io
 * mirror like any upstream image, and passed to verify with --probe-image.
 */
export function probeImage(out: string, log?: (line: string) => void): { archive: string; ref: string } {
  const [tool = '', deb = ''] = gobuild(['oci-image', 'debian-bookworm:busybox'], log);
  const busybox = join(deb, 'busybox', 'rootfs');
  const stage = join(out, 'probe-stage');
  mkdirSync(join(stage, 'bin'), { recursive: true });
  const applets = execFileSync(join(busybox, 'bin', 'busybox'), ['--list'], { encoding: 'utf8' })
    .trim()
    .split('\n');
  for (const a of applets) if (!existsSync(join(busybox, 'bin', a))) symlinkSync('busybox', join(stage, 'bin', a));
  const banner = spawnSync(join(busybox, 'bin', 'busybox'), ['--help'], { encoding: 'utf8' });
  const version = /BusyBox v([0-9.]+)/.exec(`${banner.stdout}${banner.stderr}`)?.[1];
  const ref = `docker.io/kubemix/e2e-busybox:${version ?? 'debian12'}`;
  const archive = join(out, 'e2e-busybox.tar');
  execFileSync(join(tool, 'bin', 'oci-image'), [
    '--out',
    archive,
    '--ref',
    ref,
    '--created',
    '2026-01-01T00:00:00Z',
    '--layer',
    busybox,
    '--history',
    'debian-bookworm: busybox-static',
    '--layer',
    stage,
    '--history',
    'kubemix e2e: BusyBox applets linked',
    '--entrypoint',
    '/bin/sh',
  ]);
  return { archive, ref };
}
