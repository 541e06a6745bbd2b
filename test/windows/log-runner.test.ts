// kube-log-runner's flags as k8s.io/component-base logs/kube-log-runner
// parses them: -log-file-size is a resource.Quantity in bytes, -log-file-age a
// Go time.Duration; without an age rotated files are never removed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeletCommandLine, logRunner } from '../../src/render/windows/kubeadm.js';
import { modelFor } from './fixtures.js';

const SUFFIX: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };

/** Bytes of a resource.Quantity (the decimal and binary SI suffixes a log size would use). */
export function quantityBytes(text: string): number {
  const m = /^(\d+)(|k|M|G|Ki|Mi|Gi)$/.exec(text);
  if (m === null) throw new Error(`not a quantity: ${text}`);
  return Number(m[1]) * (SUFFIX[m[2] ?? ''] ?? NaN);
}

/** Seconds of a Go duration (h, m, s; Go has no day unit). */
export function goDurationSeconds(text: string): number {
  const parts = [...text.matchAll(/(\d+)(h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`not a Go duration: ${text}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * { h: 3600, m: 60, s: 1 }[p[2] as 'h' | 'm' | 's'], 0);
}

function flag(cmd: string, name: string): string | undefined {
  return new RegExp(`(?:^| )-${name}=(\\S+)`).exec(cmd)?.[1];
}

describe('kube-log-runner rotation', () => {
  const node = modelFor({ k8s: '1.36', os: 'windows-2022', backend: 'vxlan' }).nodes.find(
    (n) => n.osFamily === 'windows',
  );
  assert.ok(node);
  // kube-proxy and flanneld are pods now: their logs are the kubelet's to rotate (containerLogMaxSize).
  for (const [what, cmd] of [['kubelet', kubeletCommandLine(node)]] as const) {
    it(`${what}: rotates at ≥ 10 MiB and deletes rotated files after a day to a month`, () => {
      const size = flag(cmd, 'log-file-size');
      const age = flag(cmd, 'log-file-age');
      assert.ok(size !== undefined && age !== undefined, `${cmd} sets both -log-file-size and -log-file-age`);
      assert.ok(quantityBytes(size) >= 10 * 1024 ** 2, `${size} bytes is too small a log file`);
      const seconds = goDurationSeconds(age);
      assert.ok(seconds >= 86400 && seconds <= 31 * 86400, `${age} is not between a day and a month`);
    });
  }
  it('the parsers tell the old bug apart: a bare 100 is 100 bytes, 7d is no Go duration', () => {
    assert.equal(quantityBytes('100'), 100);
    assert.equal(quantityBytes('100Mi'), 104857600);
    assert.throws(() => goDurationSeconds('7d'));
    assert.equal(goDurationSeconds('168h'), 604800);
    assert.match(logRunner('x', []), /-log-file-size=100Mi -log-file-age=168h/);
  });
});
