// Version rules: Kubernetes ↔ containerd ↔ Windows Server, from the matrix.
import {
  CONTAINERD,
  IMAGES,
  KUBERNETES,
  MATRIX_DATE,
  RETIRED_CONTAINERD,
  WINDOWS,
  compareVersions,
  containerdLine,
  kubernetesRelease,
} from '../../matrix/index.js';
import {
  containerdVersionProblem,
  kubernetesVersionProblem,
  type VersionProblem,
} from '../../matrix/known-versions.js';
import type { Diagnostic } from '../../errors.js';
import { error, warning, type Rule } from './context.js';

export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

const K8S_PATH = 'spec.kubernetes.version';
const CTR_PATH = 'spec.containerRuntime.containerd';

/** `1.36.000` (not how upstream writes it), `1.36.99` (past the matrix's patch): error('version.…'). */
function versionProblem(found: VersionProblem | undefined, path: string): Diagnostic[] {
  if (found === undefined) return [];
  return [
    found.code === 'version.not-canonical'
      ? error('version.not-canonical', path, found.message, found.hint)
      : error('version.patch-unknown', path, found.message, found.hint),
  ];
}

export const kubernetesVersion: Rule = (ctx) => {
  const written = versionProblem(kubernetesVersionProblem(ctx.spec.kubernetesVersion), K8S_PATH);
  if (written.length > 0) return written;
  const minor = minorOf(ctx.spec.kubernetesVersion);
  const release = kubernetesRelease(minor);
  if (release === undefined) {
    return [
      error(
        'version.kubernetes-unknown',
        K8S_PATH,
        `Kubernetes ${ctx.spec.kubernetesVersion} is not in kubemix's compatibility matrix`,
        `supported minors: ${KUBERNETES.map((k) => k.minor).join(', ')}`,
      ),
    ];
  }
  if (release.endOfLife < MATRIX_DATE) {
    return [
      warning(
        'version.kubernetes-eol',
        K8S_PATH,
        `Kubernetes ${minor} reached end of life on ${release.endOfLife}`,
        'use a supported minor',
      ),
    ];
  }
  return [];
};

export const containerdVersion: Rule = (ctx) => {
  const written = versionProblem(containerdVersionProblem(ctx.spec.containerdVersion), CTR_PATH);
  if (written.length > 0) return written;
  const line = minorOf(ctx.spec.containerdVersion);
  const out: Diagnostic[] = [];
  const retired = RETIRED_CONTAINERD[line];
  if (retired !== undefined)
    return [error('version.containerd-retired', CTR_PATH, retired, 'use containerd 2.3 (LTS)')];
  const known = containerdLine(line);
  if (known === undefined) {
    return [
      error(
        'version.containerd-unknown',
        CTR_PATH,
        `containerd ${ctx.spec.containerdVersion} is not in kubemix's compatibility matrix`,
        `supported lines: ${CONTAINERD.map((c) => c.line).join(', ')}`,
      ),
    ];
  }
  const k8s = kubernetesRelease(minorOf(ctx.spec.kubernetesVersion));
  if (k8s !== undefined && k8s.containerdLines.length === 0) {
    out.push(
      warning(
        'version.containerd-unconfirmed',
        CTR_PATH,
        `Kubernetes ${k8s.minor} has no containerd support row upstream yet: containerd ${line} with it is unconfirmed`,
      ),
    );
  } else if (k8s !== undefined && !k8s.containerdLines.includes(line)) {
    out.push(
      error(
        'version.containerd-unsupported',
        CTR_PATH,
        `Kubernetes ${k8s.minor} does not support containerd ${line}`,
        `use one of: ${k8s.containerdLines.join(', ')}`,
      ),
    );
  }
  if (known.endOfLife < MATRIX_DATE)
    out.push(
      error(
        'version.containerd-retired',
        CTR_PATH,
        `containerd ${line} reached end of life on ${known.endOfLife}`,
        'use containerd 2.3 (LTS)',
      ),
    );
  else if (!known.lts && monthsBetween(MATRIX_DATE, known.endOfLife) < 3) {
    out.push(
      warning(
        'version.containerd-eol-soon',
        CTR_PATH,
        `containerd ${line} reaches end of life on ${known.endOfLife}`,
        'use containerd 2.3 (LTS)',
      ),
    );
  }
  return out;
};

function monthsBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / (30 * 24 * 3600 * 1000);
}

export const windowsPauseImage: Rule = (ctx) => {
  const out: Diagnostic[] = [];
  for (const w of WINDOWS) {
    const node = ctx.nodes.find((n) => n.os === w.os);
    if (node !== undefined && compareVersions(IMAGES.pause.tag, w.minPause) < 0) {
      out.push(
        error(
          'version.pause-windows',
          `${node.path}.os`,
          `${w.os} needs the pause image ${w.minPause} or newer; the matrix pins ${IMAGES.pause.tag}`,
        ),
      );
    }
  }
  return out;
};
