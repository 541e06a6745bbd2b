// `kubemix topology`: golden SVGs, one data-node group per node with its OS
// and role, no two node boxes overlapping (checked on the SVG's own rects),
// nothing fetched from a network, and an HTML page that embeds the SVG.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { assertGolden } from './helpers/golden.js';
import { repoPath, runCli } from './helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kubemix-topology-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const GOLDEN: Record<string, string> = {
  'k8s-libvirt-1-1-1': 'k8s-libvirt-1-1-1.svg',
  'k8s-libvirt-3-2-2': 'k8s-libvirt-3-2-2.svg',
  'examples/existing-host-gw.yaml': 'existing-host-gw.svg',
};

interface NodeBox {
  name: string;
  os: string;
  role: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

function nodeBoxes(svg: string): NodeBox[] {
  const re =
    /<g class="node" data-node="([^"]+)" data-os="(\w+)" data-role="([\w-]+)"><title>[^<]*<\/title><rect x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)"/g;
  return [...svg.matchAll(re)].map((m) => ({
    name: m[1] ?? '',
    os: m[2] ?? '',
    role: m[3] ?? '',
    x: Number(m[4]),
    y: Number(m[5]),
    w: Number(m[6]),
    h: Number(m[7]),
  }));
}

async function svgOf(spec: string, extra: string[] = []): Promise<string> {
  const r = await runCli(['topology', spec, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

describe('kubemix topology', () => {
  for (const [spec, golden] of Object.entries(GOLDEN)) {
    it(`${spec}: golden SVG, same twice`, async () => {
      const svg = await svgOf(spec);
      assert.equal(await svgOf(spec), svg);
      assertGolden(`topology/${golden}`, svg);
    });
  }

  for (const spec of ['k8s-libvirt-1-1-1', 'k8s-libvirt-3-2-2', 'k8s-libvirt-3-17-3']) {
    it(`${spec}: every node is a group with OS and role, boxes do not overlap, no network`, async () => {
      const svg = await svgOf(spec, ['--nodes', '[[when_group=compute_nodes,os=windows]]']);
      const plan = JSON.parse(
        (await runCli(['plan', spec, '--json', '--nodes', '[[when_group=compute_nodes,os=windows]]'])).stdout,
      ) as { nodes: { name: string; osFamily: string; role: string }[] };
      const boxes = nodeBoxes(svg);
      assert.deepEqual(
        boxes.map((b) => `${b.name}/${b.os}/${b.role}`).sort(),
        plan.nodes.map((n) => `${n.name}/${n.osFamily}/${n.role}`).sort(),
      );
      for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) {
          const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
          assert.ok(apart, `${a.name} overlaps ${b.name}`);
        }
      }
      const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)?.[1]);
      assert.ok(
        boxes.every((b) => b.x + b.w <= width),
        'every box inside the picture',
      );
      assert.doesNotMatch(svg.replace('xmlns="http://www.w3.org/2000/svg"', ''), /https?:|href=/);
      assert.match(svg, /VNI 4096 · UDP 4789/);
    });
  }

  it('--out FILE.html embeds the SVG with hover details and no network', async () => {
    const file = join(tmp, 'cluster.html');
    const r = await runCli([
      'topology',
      'k8s-libvirt-1-1-1',
      '--nodes',
      '[[when_group=compute_nodes,os=windows]]',
      '--out',
      file,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const html = readFileSync(file, 'utf8');
    assert.match(html, /<svg [^>]*>/);
    assert.match(html, /id="node-details">\{"controller-01":/);
    assert.match(html, /mouseenter/);
    assert.doesNotMatch(html.replace('xmlns="http://www.w3.org/2000/svg"', ''), /https?:|<link|src=/);
  });

  it('--out with another extension is exit 2', async () => {
    assert.equal((await runCli(['topology', 'k8s-libvirt-1-1-1', '--out', join(tmp, 'x.png')])).code, 2);
  });
});

describe('README picture', () => {
  it('docs/topology-k8s-libvirt-1-1-1.svg is what kubemix draws for the bundled example today', async () => {
    const svg = await svgOf('examples/k8s-libvirt-1-1-1.yaml');
    assert.equal(
      readFileSync(repoPath('docs', 'topology-k8s-libvirt-1-1-1.svg'), 'utf8'),
      svg,
      'regenerate: kubemix topology examples/k8s-libvirt-1-1-1.yaml --out docs/topology-k8s-libvirt-1-1-1.svg',
    );
  });
});
