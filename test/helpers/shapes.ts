// The cluster shapes tests render: Kubeinit's periodic-job shapes 1-1-1
// (mixed: a Windows compute, from examples/), 3-2-1 and 3-0-2 (Linux only),
// and a Linux-only 1-1-1 on Calico (examples/calico-libvirt-1-1-1.yaml).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveModel, type ClusterModel } from '../../src/model/resolve.js';
import { assemblePlan, type AssembledPlan } from '../../src/plan/assemble.js';
import { readSpec } from '../../src/spec/read.js';

/** The repository root (tests run from dist/test/…). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export const SHAPES = ['k8s-libvirt-1-1-1', 'k8s-libvirt-3-2-1', 'k8s-libvirt-3-0-2', 'calico-libvirt-1-1-1'] as const;
export type Shape = (typeof SHAPES)[number];

/** Shapes read from examples/ (the rest come from Kubeinit spec strings). */
const FROM_EXAMPLES: readonly Shape[] = ['k8s-libvirt-1-1-1', 'calico-libvirt-1-1-1'];

export function modelFor(shape: Shape): ClusterModel {
  if (FROM_EXAMPLES.includes(shape)) {
    const path = join(REPO, 'examples', `${shape}.yaml`);
    return resolveModel(readSpec({ kind: 'file', path, text: readFileSync(path, 'utf8') }));
  }
  const hypervisors = shape.endsWith('-2') ? 'hv1.example.com,hv2.example.com' : 'hv1.example.com';
  return resolveModel(readSpec({ kind: 'kubeinit', spec: shape, hypervisors }));
}

export function planFor(shape: Shape): AssembledPlan {
  return assemblePlan(modelFor(shape));
}

/** A fresh directory under the OS temp dir, and a way to remove it. */
export function scratch(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `kubemix-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes a node's artifacts as they would lie on the host, under `root`. */
export function writeNodeTree(root: string, files: AssembledPlan['files'], node: string): void {
  for (const f of files.filter((x) => x.node === node)) {
    const path = join(root, f.remotePath);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.content);
  }
}
