// The topology as a person sees it: Debian's Chromium (driven by
// playwright-core; browser downloads are impossible here) renders the HTML
// page to PNG. The picture is not blank, every node is in the DOM, and no two
// node boxes overlap as laid out by the browser (getBBox).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import { stringify } from 'yaml';
import { runCli } from './helpers/cli.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? undefined : 'Debian chromium is not installed';
const tmp = mkdtempSync(join(tmpdir(), 'kubemix-topology-browser-'));

/** A 20-node mixed cluster over four hypervisors. */
function twentyNodes(): string {
  const file = join(tmp, 'twenty.yaml');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'kubemix.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'twenty' },
      spec: {
        infrastructure: {
          driver: 'libvirt',
          hypervisors: [1, 2, 3, 4].map((i) => ({ name: `hypervisor-0${i}`, address: `hv${i}.example.com` })),
        },
        nodes: {
          controlPlane: { count: 3 },
          workers: [
            { name: 'lin', count: 8, os: 'debian-13' },
            { name: 'win', count: 8, os: 'windows-2025' },
          ],
        },
      },
    }),
  );
  return file;
}

interface Box {
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

function overlapping(boxes: readonly Box[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < boxes.length; i += 1) {
    for (let j = i + 1; j < boxes.length; j += 1) {
      const a = boxes[i] as Box;
      const b = boxes[j] as Box;
      if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) out.push(`${a.name} × ${b.name}`);
    }
  }
  return out;
}

/** Share of pixels that are not (near) white. */
function inkShare(png: Buffer): number {
  const image = PNG.sync.read(png);
  let ink = 0;
  for (let i = 0; i < image.data.length; i += 4) {
    if ((image.data[i] ?? 255) < 235 || (image.data[i + 1] ?? 255) < 235 || (image.data[i + 2] ?? 255) < 235) ink += 1;
  }
  return ink / (image.width * image.height);
}

describe('topology in headless Chromium', { skip, timeout: 120_000 }, () => {
  let browser: Browser;
  before(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const spec of ['examples/k8s-libvirt-1-1-1.yaml', 'k8s-libvirt-3-2-2', 'twenty']) {
    it(`${spec}: rendered, every node present, no two node boxes overlap`, async () => {
      const specArg = spec === 'twenty' ? twentyNodes() : spec;
      const html = join(tmp, `${spec.replace(/\W/g, '_')}.html`);
      const r = await runCli(['topology', specArg, '--out', html]);
      assert.equal(r.code, 0, r.stderr);
      const planned = await runCli(['plan', '--json', specArg]);
      const expected = (JSON.parse(planned.stdout) as { nodes: { name: string }[] }).nodes.map((n) => n.name).sort();
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      try {
        await page.goto(pathToFileURL(html).href);
        const boxes = await page.$$eval('g[data-node]', (groups) =>
          groups.map((g) => {
            // SVG geometry as the browser laid it out (tsc here has no DOM types).
            const b = (
              g as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }
            ).getBBox();
            return { name: g.getAttribute('data-node') ?? '', x: b.x, y: b.y, w: b.width, h: b.height };
          }),
        );
        assert.deepEqual(boxes.map((b) => b.name).sort(), expected);
        assert.deepEqual(overlapping(boxes), []);
        assert.ok(boxes.every((b) => b.w > 0 && b.h > 0));
        const png = await page.screenshot({ fullPage: true });
        if (process.env.KUBEMIX_KEEP_SCREENSHOTS !== undefined)
          writeFileSync(join(process.env.KUBEMIX_KEEP_SCREENSHOTS, `${spec.replace(/\W/g, '_')}.png`), png);
        const share = inkShare(png);
        assert.ok(share > 0.02, `the picture is nearly blank (${(share * 100).toFixed(2)}% ink)`);
        await page.hover(`g[data-node="${expected[0] ?? ''}"]`);
        assert.match((await page.textContent('#details')) ?? '', new RegExp(expected[0] ?? '^$'));
      } finally {
        await page.close();
      }
    });
  }
});
