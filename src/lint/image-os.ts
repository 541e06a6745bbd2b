// Where the OS of a container image comes from. The registry (another issue)
// knows for sure; until it answers, names tell a lot: Microsoft's Windows base
// images, Windows tag families (ltsc2022, nanoserver, …) and Linux-only
// official images. Every answer carries its source so findings can say how
// sure they are.
import { WINDOWS } from '../matrix/index.js';
import { parseImageRef } from './image-ref.js';

export type OsSource = 'registry' | 'cache' | 'heuristic';
export type PodOs = 'linux' | 'windows';

export interface ImageOs {
  readonly os: PodOs;
  /** Windows build the image targets (`10.0.20348`), when known. */
  readonly osVersion?: string;
  readonly source: OsSource;
}

/**
 * Answers the OS of an image, or undefined when it cannot tell. `null` means
 * it knows there is no single answer (a registry index with Linux and Windows
 * entries): the chain stops there, so a name heuristic cannot override it.
 */
export interface ImageOsResolver {
  resolve(image: string): Promise<ImageOs | null | undefined>;
}

/**
 * Windows tag families older than kubemix supports, lower case: recognised so
 * an image built for them is reported as a build mismatch instead of going
 * unnoticed. Builds from Microsoft's "Windows container version
 * compatibility" table (2016/1607 14393, 1709 16299, 1803 17134, 2019/1809
 * 17763, 1903 18362, 1909 18363, 2004 19041, 20H2 19042). The builds
 * kubemix deploys come from the compatibility matrix.
 */
const LEGACY_WINDOWS_TAGS: Readonly<Record<string, string>> = {
  ltsc2016: '10.0.14393',
  sac2016: '10.0.14393',
  '1607': '10.0.14393',
  '1709': '10.0.16299',
  '1803': '10.0.17134',
  ltsc2019: '10.0.17763',
  '1809': '10.0.17763',
  '1903': '10.0.18362',
  '1909': '10.0.18363',
  '2004': '10.0.19041',
  '20h2': '10.0.19042',
};

/** Windows-only repositories (after the registry), matched as path prefixes. */
const WINDOWS_REPOS = ['windows/', 'dotnet/framework/', 'oss/kubernetes/windows-host-process-containers-base-image'];
/**
 * Windows-only repositories Microsoft published on Docker Hub before moving
 * to mcr.microsoft.com (`microsoft/iis`, `microsoft/windowsservercore:1709`):
 * deprecated, still in many manifests.
 */
const DOCKER_HUB_WINDOWS_REPOS = new Set([
  'microsoft/windowsservercore',
  'microsoft/nanoserver',
  'microsoft/iis',
  'microsoft/aspnet',
  'microsoft/dotnet-framework',
  'microsoft/dotnet-framework-build',
  'microsoft/dotnet-framework-samples',
  'microsoft/wcf',
  'microsoft/mssql-server-windows',
  'microsoft/mssql-server-windows-developer',
  'microsoft/mssql-server-windows-express',
]);
/** Docker Hub official images that publish no Windows variant. */
const LINUX_LIBRARY = new Set([
  'alpine',
  'almalinux',
  'busybox',
  'centos',
  'debian',
  'fedora',
  'haproxy',
  'httpd',
  'mariadb',
  'memcached',
  'mysql',
  'nginx',
  'postgres',
  'rabbitmq',
  'redis',
  'rockylinux',
  'ubuntu',
]);
/** Tag tokens that name a Linux distribution release. */
const LINUX_TAG_TOKENS = new Set([
  'alpine',
  'bookworm',
  'bullseye',
  'buster',
  'trixie',
  'jammy',
  'noble',
  'focal',
  'slim',
  'ubi8',
  'ubi9',
  'distroless',
]);
const WINDOWS_TAG_TOKENS = ['nanoserver', 'windowsservercore', 'servercore', 'windows'];

function windowsBuildOfTag(tag: string): string | undefined {
  const explicit = /(?:^|[-_.])(10\.0\.\d{5})(?:\.\d+)?(?:$|[-_])/.exec(tag);
  if (explicit?.[1] !== undefined) return explicit[1];
  const tokens = tag.toLowerCase().split(/[-_.]/);
  for (const release of WINDOWS) {
    if (tokens.includes(release.ltsc)) return release.build;
  }
  for (const token of tokens) {
    const legacy = LEGACY_WINDOWS_TAGS[token];
    if (legacy !== undefined) return legacy;
  }
  return undefined;
}

/** The OS an image name implies, or undefined when the name says nothing. */
export function imageOsFromName(image: string): ImageOs | undefined {
  const ref = parseImageRef(image);
  const tag = ref.tag ?? '';
  const build = windowsBuildOfTag(tag);
  const tokens = tag.split(/[-_.]/);
  const windowsRepo =
    ref.registry === 'mcr.microsoft.com'
      ? WINDOWS_REPOS.some((prefix) => ref.repository.startsWith(prefix))
      : (ref.registry === 'docker.io' && DOCKER_HUB_WINDOWS_REPOS.has(ref.repository)) ||
        /(^|\/)windows\/(servercore|nanoserver|server)(\/|$)/.test(ref.repository);
  // Bare numbers (1809, 2004) only refine the build: as sole evidence they would
  // misread ordinary version tags.
  const windowsTag =
    /(?:^|[-_.])10\.0\.\d{5}/.test(tag) ||
    tokens.some((t) => t.startsWith('ltsc') || WINDOWS_TAG_TOKENS.some((w) => t.startsWith(w)));
  if (windowsRepo || windowsTag) {
    return build === undefined
      ? { os: 'windows', source: 'heuristic' }
      : { os: 'windows', osVersion: build, source: 'heuristic' };
  }
  const library =
    ref.registry === 'docker.io' && ref.repository.startsWith('library/') ? ref.repository.slice(8) : undefined;
  if ((library !== undefined && LINUX_LIBRARY.has(library)) || tokens.some((t) => LINUX_TAG_TOKENS.has(t))) {
    return { os: 'linux', source: 'heuristic' };
  }
  return undefined;
}

export const heuristicResolver: ImageOsResolver = {
  resolve: (image) => Promise.resolve(imageOsFromName(image)),
};

/** Ask each resolver in turn; the first answer wins (registry, then cache, then names). */
export function chainResolvers(...resolvers: readonly ImageOsResolver[]): ImageOsResolver {
  return {
    async resolve(image) {
      for (const resolver of resolvers) {
        const answer = await resolver.resolve(image);
        if (answer !== undefined) return answer;
      }
      return undefined;
    },
  };
}

/** Fixed answers, e.g. a loaded cache or a test double, reported with the given source. */
export function staticResolver(
  entries: Readonly<Record<string, Omit<ImageOs, 'source'>>>,
  source: OsSource,
): ImageOsResolver {
  return {
    resolve: (image) => {
      const hit = entries[image];
      return Promise.resolve(hit === undefined ? undefined : { ...hit, source });
    },
  };
}

/** Resolve each distinct image once. */
export async function resolveImages(
  images: Iterable<string>,
  resolver: ImageOsResolver,
): Promise<ReadonlyMap<string, ImageOs>> {
  const out = new Map<string, ImageOs>();
  for (const image of [...new Set(images)].sort()) {
    const answer = await resolver.resolve(image);
    if (answer !== undefined && answer !== null) out.set(image, answer);
  }
  return out;
}

/**
 * The resolver the CLI uses: the registry (src/registry, answering from its
 * fresh cache or the network), then the on-disk cache even when stale, then
 * the name heuristics. `offline` leaves the registry out.
 */
export function imageOsResolver(options: {
  offline: boolean;
  registry?: ImageOsResolver;
  cache?: ImageOsResolver;
}): ImageOsResolver {
  const chain: ImageOsResolver[] = [];
  if (!options.offline && options.registry !== undefined) chain.push(options.registry);
  if (options.cache !== undefined) chain.push(options.cache);
  chain.push(heuristicResolver);
  return chainResolvers(...chain);
}
