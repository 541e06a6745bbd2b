// Every download in every plan has a known SHA256 — pinned in the matrix or
// the spec, or published by upstream and read by the deployer before use —
// so no path through a plan reaches a node that would refuse a file for want
// of a hash. Plans: every bundled example, every Windows combination of the
// golden set, HostProcess mode, and a proxy + mirror spec. Also: the spec
// can pin or move any download, and what it may not do is refused by path.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InputError } from '../src/errors.js';
import { checkPlanRules } from '../src/exec/plan-check.js';
import {
  CLOUD_IMAGES,
  INSTALL_ISOS,
  CONTAINERD,
  DOWNLOAD_IDS,
  KUBERNETES,
  linuxDownloads,
  windowsDownloads,
  COMPONENTS,
} from '../src/matrix/index.js';
import { resolveDownload, sha256Refs } from '../src/model/downloads.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import type { Plan } from '../src/plan/types.js';
import { readSpec } from '../src/spec/read.js';
import { REPO } from './helpers/shapes.js';
import { GOLDEN_COMBOS, HOSTPROCESS_COMBOS, comboName, specText } from './windows/fixtures.js';

const HEX = /^[0-9a-f]{64}$/;

function planOf(path: string, text: string): Plan {
  return assemblePlan(resolveModel(readSpec({ kind: 'file', path, text }))).plan;
}

const PLANS: [string, () => Plan][] = [
  ...readdirSync(join(REPO, 'examples'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f): [string, () => Plan] => [
      `examples/${f}`,
      () => planOf(f, readFileSync(join(REPO, 'examples', f), 'utf8')),
    ]),
  ...[
    ...GOLDEN_COMBOS,
    ...HOSTPROCESS_COMBOS,
    { ...HOSTPROCESS_COMBOS[0], mirrors: true } as (typeof GOLDEN_COMBOS)[number],
  ].map((c): [string, () => Plan] => [
    `windows ${comboName(c)}${c.mirrors === true ? ' (proxy, mirrors)' : ''}`,
    () => planOf(`${comboName(c)}.yaml`, specText(c)),
  ]),
];

function scripts(plan: Plan): string[] {
  return plan.tasks.flatMap((t) => [t.check?.script ?? '', t.apply.script]);
}

describe('every download in every plan has a known SHA256', () => {
  for (const [name, make] of PLANS) {
    it(name, () => {
      const plan = make();
      const downloads = plan.downloads ?? [];
      assert.ok(downloads.length > 0, 'the plan downloads node binaries');
      for (const d of downloads) {
        const known = d.sha256 !== undefined ? HEX.test(d.sha256) : d.checksumUrl?.startsWith('https://') === true;
        assert.ok(known, `${d.id}: no SHA256 and no published checksum`);
        assert.equal(d.hashFrom === 'published', d.sha256 === undefined, d.id);
      }
      // Every reference is a listed download and every listed download is used.
      const named = new Set(scripts(plan).flatMap(sha256Refs));
      assert.deepEqual([...named].sort(), downloads.map((d) => d.id).sort());
      assert.deepEqual(checkPlanRules(plan), []);
      // No fetch without a hash to check it against, and no refusal for want of one.
      for (const s of scripts(plan)) {
        assert.doesNotMatch(s, /refuses to install|-ChecksumUrl|-Hash ''/);
        for (const line of s.split('\n').filter((l) => /Get-KubemixDownload -Name/.test(l)))
          assert.match(line, /-Hash '\{\{sha256:windows\/[^}]+\}\}'$/, line);
      }
      // The services node serves every binary: one cache task holds exactly the plan's downloads.
      const holders = plan.tasks.filter((t) => t.serves !== undefined);
      assert.equal(holders.length, 1);
      assert.deepEqual(
        holders[0]?.serves?.downloads,
        downloads.map((d) => d.id),
      );
      for (const t of plan.tasks)
        if (sha256Refs(`${t.check?.script ?? ''}\n${t.apply.script}`).length > 0)
          assert.ok(t.after.includes(holders[0]?.id ?? ''), `${t.id} waits for the cache`);
    });
  }

  it('the matrix pins or publishes a hash for every file of every release it lists (none is null)', () => {
    for (const k of KUBERNETES)
      for (const c of CONTAINERD) {
        for (const d of [
          ...windowsDownloads(k.patch, c.patch),
          ...linuxDownloads(c.patch, COMPONENTS.runc, COMPONENTS.cniPlugins),
        ]) {
          assert.ok(
            d.checksum.kind === 'sidecar' ||
              (d.checksum.sha256 !== null && HEX.test(d.checksum.sha256) && d.checksum.source !== undefined),
            `${d.id} ${d.version}`,
          );
        }
      }
  });

  it("flanneld.exe carries its published hash; WinSW (earlier versions' service wrapper) is no download any more", () => {
    const byId = new Map(windowsDownloads('1.36.2', '2.3.2').map((d) => [d.id, d]));
    assert.deepEqual(byId.get('windows/flanneld.exe')?.checksum, {
      kind: 'pinned',
      sha256: 'd5dd439bdd9e1adb04b715d3d4c15ddc1e59e7cd1bd7ab2a3d77a4aeca23429b',
      source: 'rancher/rke2 Dockerfile.windows@51288cd1',
    });
    assert.equal(byId.has('windows/winsw.exe'), false);
  });
});

describe('spec.downloads: a user pins or moves any download', () => {
  const base = readFileSync(join(REPO, 'examples', 'existing-host-gw.yaml'), 'utf8');
  const withDownloads = (yaml: string): string => `${base}  downloads:\n${yaml}`;
  const pin = 'ab'.repeat(32);

  it('a pin wins over the matrix and over the published checksum; a new URL comes with its hash', () => {
    const plan = planOf(
      'pins.yaml',
      withDownloads(
        `    windows/kubelet.exe:\n      sha256: "${pin.toUpperCase()}"\n    windows/flanneld.exe:\n      url: https://mirror.example.internal/flanneld-0.28.5.exe\n      sha256: "${pin}"\n`,
      ),
    );
    const byId = new Map((plan.downloads ?? []).map((d) => [d.id, d]));
    assert.deepEqual(byId.get('windows/kubelet.exe'), {
      id: 'windows/kubelet.exe',
      name: 'kubelet.exe',
      version: byId.get('windows/kubelet.exe')?.version,
      url: byId.get('windows/kubelet.exe')?.url,
      sha256: pin,
      hashFrom: 'spec',
    });
    assert.equal(byId.get('windows/flanneld.exe')?.url, 'https://mirror.example.internal/flanneld-0.28.5.exe');
    assert.equal(byId.get('windows/flanneld.exe')?.sha256, pin);
    assert.equal(byId.get('windows/windows-container-networking.zip')?.hashFrom, 'matrix');
    assert.equal(byId.get('linux/runc')?.hashFrom, 'published');
  });

  it('refuses an unknown id (with a suggestion) and a URL without its hash, by path, all at once', () => {
    assert.throws(
      () =>
        planOf(
          'bad.yaml',
          withDownloads(
            `    windows/flaneld.exe:\n      sha256: "${pin}"\n    linux/runc:\n      url: https://mirror.example.internal/runc\n`,
          ),
        ),
      (e: unknown) => {
        const text = JSON.stringify(e);
        assert.match(text, /"path":"spec\.downloads\.windows\/flaneld\.exe"/);
        assert.match(text, /did you mean windows\/flanneld\.exe/);
        assert.match(text, /"path":"spec\.downloads\.linux\/runc\.url"/);
        return true;
      },
    );
    assert.throws(
      () => planOf('bad.yaml', withDownloads('    linux/containerd.tar.gz:\n      sha256: nothex\n')),
      /1 error in the spec/,
    );
    assert.throws(
      () => planOf('bad.yaml', withDownloads('    linux/containerd.tar.gz:\n      sha256: nothex\n')),
      (e: unknown) =>
        /spec\.downloads\.linux\/containerd\.tar\.gz\.sha256.*64 hexadecimal digits/.test(JSON.stringify(e)),
    );
  });

  it('every id the spec accepts is one the matrix resolves', () => {
    const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text: base }));
    for (const id of DOWNLOAD_IDS) {
      // Cloud images and install ISOs are the libvirt driver's (fetched by each hypervisor, drivers/libvirt/images.ts).
      if (id.startsWith('images/')) {
        const name = id.slice('images/'.length);
        assert.ok(name in CLOUD_IMAGES || name in INSTALL_ISOS, id);
      } else assert.equal(resolveDownload(model, id).id, id);
    }
  });

  it('a download the matrix cannot verify and the spec does not pin fails planning (exit 2), naming the pin to add', () => {
    const model = resolveModel(readSpec({ kind: 'file', path: 'x.yaml', text: base }));
    const matrix = windowsDownloads('1.36.2', '2.3.2').map((d) =>
      d.id === 'windows/flanneld.exe' ? { ...d, checksum: { kind: 'pinned' as const, sha256: null } } : d,
    );
    assert.throws(
      () => resolveDownload(model, 'windows/flanneld.exe', matrix),
      (e: unknown) => {
        assert.ok(e instanceof InputError);
        assert.equal(e.code, 'downloads.no-sha256');
        assert.match(e.message, /flanneld\.exe 0\.28\.4/);
        assert.match(JSON.stringify(e.toJSON()), /spec\.downloads\.windows\/flanneld\.exe\.sha256/);
        return true;
      },
    );
    const pinned = resolveModel(
      readSpec({
        kind: 'file',
        path: 'x.yaml',
        text: withDownloads(`    windows/flanneld.exe:\n      sha256: "${pin}"\n`),
      }),
    );
    assert.equal(resolveDownload(pinned, 'windows/flanneld.exe', matrix).sha256, pin);
  });
});
