// Layer 2's pure side: the probe pods, Services and cells of a mixed cluster
// (golden); the Linux probe script run for real with this machine's sh and
// wget against loopback servers, its lines read back by the judge; the
// Windows scripts against tree-sitter-powershell and our rules (no Windows
// host here).
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { clusterExpectations } from '../src/verify/cluster/expect.js';
import { judgeCells, judgeNodePort, parseCellLines } from '../src/verify/cluster/judge.js';
import { probeNodePort } from '../src/verify/cluster/nodeport.js';
import type { CheckResult } from '../src/verify/types.js';
import * as p from '../src/verify/cluster/probes.js';
import { demoManifests } from '../src/verify/cluster/demo.js';
import { assertGolden } from './helpers/golden.js';
import { lintPowerShell, parseErrors } from './windows/powershell.js';

const model = resolveModel(
  readSpec({ kind: 'kubeinit', spec: 'k8s-libvirt-1-1-1', nodes: '[[when_group=compute_nodes,os=windows]]' }),
);
const e = clusterExpectations(model);
const echoes = e.nodes.map((node, i) => ({ node, ip: `10.244.${i}.5` }));
const clusterIps = { 'svc-linux': '10.96.0.10', 'svc-windows': '10.96.0.11', 'svc-mixed': '10.96.0.12' };

describe('cluster probes (pure)', () => {
  it('probe pods, Services and cells of a mixed 1-1-1 cluster (golden)', () => {
    const parts = [
      '# expectations',
      stringify(e),
      '# echo pods',
      ...e.nodes.map((n) => stringify(p.echoPod(n))),
      '# services',
      ...p.services([...new Set(e.nodes.map((n) => n.os))]).map((s) => stringify(s)),
      '# cells',
      ...e.nodes.flatMap((n) =>
        [...p.cellsOf(n, echoes, clusterIps, e.clusterDomain, ['example.org:443']), ...p.hostCellsOf(n, echoes)].map(
          (c) => `${c.id} ${c.kind} ${c.arg}`,
        ),
      ),
      '# client pod (Windows), script not repeated',
      stringify({
        ...p.clientPod(e.nodes[1]!, []),
        spec: { ...(p.clientPod(e.nodes[1]!, []).spec as object), containers: '…' },
      }),
      '# host pods (hostNetwork on Linux, HostProcess on Windows), scripts not repeated',
      ...e.nodes.map((n) =>
        stringify({
          ...p.clientPod(n, [], true),
          spec: { ...(p.clientPod(n, [], true).spec as object), containers: '…' },
        }),
      ),
      '# namespace with host → pod cells',
      stringify(p.namespaceManifest(true)),
    ];
    assertGolden('verify/cluster-1-1-1.txt', parts.join('\n'));
    assert.deepEqual(
      e.nodes.map((n) => [n.name, n.os, n.probeImage, n.runtimeClass ?? '-']),
      [
        [
          'controller-01',
          'linux',
          'docker.io/library/busybox:1.37.0@sha256:9db7b59979c38555a39def84a31fb98b5296952f9e3afd4f6f11f05b07adfab0',
          '-',
        ],
        ['compute-01', 'windows', 'mcr.microsoft.com/windows/servercore:ltsc2022', 'windows-2022'],
      ],
    );
  });

  it('the demo: nginx on Linux proxying to IIS on Windows, a NodePort (golden)', () => {
    const manifests = demoManifests(e);
    assert.ok(manifests !== undefined);
    assertGolden(
      'verify/demo-1-1-1.txt',
      manifests.map((m) => stringify(m, { aliasDuplicateObjects: false })).join('---\n'),
    );
    const iisCommand = (manifests.find((m) => m.metadata['name'] === 'iis' && m.kind === 'Deployment') as any).spec
      .template.spec.containers[0].command[3] as string;
    assert.deepEqual(parseErrors(iisCommand), [], iisCommand);
    const linuxOnly = { ...e, nodes: e.nodes.filter((n) => n.os === 'linux') };
    assert.equal(demoManifests(linuxOnly), undefined);
  });

  it('Windows probe scripts parse with tree-sitter-powershell and pass our PowerShell rules', () => {
    const cells = p.cellsOf(e.nodes[1]!, echoes, clusterIps, e.clusterDomain, ['example.org:443', '[2001:db8::1]:80']);
    assert.ok(cells.some((c) => c.kind === 'tcp'));
    for (const s of [p.windowsEchoScript(), p.windowsClientScript(cells)]) {
      assert.deepEqual(parseErrors(s), [], s);
      assert.deepEqual(lintPowerShell(s), [], s);
    }
  });
});

describe('the Linux probe script, run for real on loopback', () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  before(async () => {
    server = createServer((_, res) => {
      hits++;
      res.end('echo-compute-01\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise((r) => server.close(r)));

  it('passes a cell that answers and holds, fails one that never answers, and the judge reads both', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const source = e.nodes[0]!;
    const cells: p.Cell[] = [
      {
        id: 'cluster/pod-ip/controller-01/compute-01',
        probe: 'pod-ip',
        source: source.name,
        target: 'compute-01',
        kind: 'http',
        arg: `127.0.0.1:${port}`,
        answers: ['echo-compute-01'],
      },
      {
        id: 'cluster/svc-ip/controller-01/svc-windows',
        probe: 'svc-ip',
        source: source.name,
        target: 'svc-windows',
        kind: 'http',
        arg: `127.0.0.1:${closedPort}`,
        answers: ['echo-compute-01'],
      },
      {
        id: 'cluster/pod-ip/controller-01/controller-01',
        probe: 'pod-ip',
        source: source.name,
        target: 'controller-01',
        kind: 'http',
        arg: `127.0.0.1:${port}`,
        answers: ['echo-controller-01'],
      },
    ];
    const script = p.linuxClientScript(cells, { deadlineS: 2, hold: 2 });
    const log = await new Promise<string>((resolve, reject) =>
      execFile('sh', ['-c', script], { timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
    assert.match(log, /KUBEMIX-CELL-DONE/);
    const lines = parseCellLines(log);
    assert.equal(lines.size, 3, log);
    assert.equal(lines.get(cells[0]!.id)?.held, 2);
    assert.ok(hits >= 3 * 2, `held probes hit the server (${hits})`);
    const results = judgeCells(cells, log, {
      nodes: e.nodes,
      underlay: [],
      podTrouble: new Map(),
      osOf: (n) => e.nodes.find((x) => x.name === n)?.os,
    });
    assert.deepEqual(
      results.map((r) => r.status),
      ['pass', 'fail', 'fail'],
    );
    assert.match(results[1]!.detail, /never succeeded in \d+ tries/);
    assert.match(results[1]!.cause ?? '', /kube-proxy on controller-01 .* backed by Windows/);
    // Reached a server, but not the pod it aimed at: the answer names another echo pod.
    assert.match(results[2]!.detail, /answered by none of echo-controller-01/);
  });
});

describe('the Linux probe script: TCP (egress) cells with BusyBox nc, run for real on loopback', () => {
  it('a listening port passes, a closed one fails; the judge names the egress cause', async (t) => {
    const busybox = ['/usr/bin/busybox', '/bin/busybox'].find((f) => existsSync(f));
    // scripts/apt-packages.txt installs it (Debian's busybox: the small nc, which takes -w and -e as the image's).
    if (busybox === undefined) return t.skip('busybox is not installed (scripts/apt-packages.txt)');
    const bin = mkdtempSync(join(tmpdir(), 'kubemix-nc-'));
    symlinkSync(busybox, join(bin, 'nc'));
    const open = createServer((_, res) => res.end('x'));
    await new Promise<void>((r) => open.listen(0, '127.0.0.1', r));
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    try {
      const source = e.nodes[0]!;
      const openPort = (open.address() as { port: number }).port;
      const cells = p
        .cellsOf(source, [], {}, e.clusterDomain, [`127.0.0.1:${openPort}`, `127.0.0.1:${closedPort}`])
        .filter((c) => c.kind === 'tcp');
      assert.equal(cells.length, 2);
      const log = await new Promise<string>((resolve, reject) =>
        execFile(
          'sh',
          ['-c', p.linuxClientScript(cells, { deadlineS: 2, hold: 1 })],
          { timeout: 30_000, env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` } },
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        ),
      );
      const results = judgeCells(cells, log, {
        nodes: e.nodes,
        underlay: [],
        podTrouble: new Map(),
        osOf: (n) => e.nodes.find((x) => x.name === n)?.os,
      });
      assert.deepEqual(
        results.map((r) => [r.id, r.status]),
        [
          [`cluster/egress/${source.name}/127.0.0.1:${openPort}`, 'pass'],
          [`cluster/egress/${source.name}/127.0.0.1:${closedPort}`, 'fail'],
        ],
        log,
      );
      assert.match(results[1]!.output ?? '', /refused/i);
      assert.match(results[1]!.cause ?? '', /egress from Linux pods: the CNI's masquerade/);
    } finally {
      await new Promise((r) => open.close(r));
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('the Linux probe script with nothing but BusyBox, as in the probe pod, run for real on loopback', () => {
  it('HTTP cells pass through BusyBox wget and timeout; a tool that crashes is named as the image, not the network', async (t) => {
    const busybox = ['/usr/bin/busybox', '/bin/busybox'].find((f) => existsSync(f));
    // Debian 12's BusyBox, as the tier's probe image (gobuild debian-bookworm:busybox): its wget crashes on -T (run 23).
    if (busybox === undefined) return t.skip('busybox is not installed (scripts/apt-packages.txt)');
    const bin = mkdtempSync(join(tmpdir(), 'kubemix-busybox-'));
    const server = createServer((_, res) => res.end('echo-controller-01\n'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const applets = execFileSync('busybox', ['--list'], { encoding: 'utf8' }).split('\n').filter(Boolean);
      for (const a of applets) symlinkSync(busybox, join(bin, a));
      const port = (server.address() as { port: number }).port;
      const source = e.nodes[0]!;
      const cell: p.Cell = {
        id: `cluster/pod-ip/${source.name}/${source.name}`,
        probe: 'pod-ip',
        source: source.name,
        target: source.name,
        kind: 'http',
        arg: `127.0.0.1:${port}`,
        answers: ['echo-controller-01'],
      };
      const run = (script: string) =>
        new Promise<string>((resolve, reject) =>
          // With env.PATH given, `sh` is looked up there: BusyBox's own shell, as in the pod.
          execFile('sh', ['-c', script], { timeout: 30_000, env: { PATH: bin } }, (error, stdout) =>
            error ? reject(error) : resolve(stdout),
          ),
        );
      const ctx = { nodes: e.nodes, underlay: [], podTrouble: new Map(), osOf: () => 'linux' as const };
      const log = await run(p.linuxClientScript([cell], { deadlineS: 2, hold: 1 }));
      assert.deepEqual(
        judgeCells([cell], log, ctx).map((r) => r.status),
        ['pass'],
        log,
      );
      // A backend that accepts and never answers: the try ends at its limit, saying so.
      const hang = createServer(() => undefined);
      await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
      try {
        const silent = { ...cell, arg: `127.0.0.1:${(hang.address() as { port: number }).port}` };
        const [r] = judgeCells(
          [silent],
          await run(p.linuxClientScript([silent], { deadlineS: 2, hold: 1, httpTryS: 1 })),
          ctx,
        );
        assert.equal(r?.status, 'fail');
        assert.match(r?.output ?? '', /no answer within 1 s \(name lookup and request\)/);
      } finally {
        hang.closeAllConnections();
        await new Promise((r) => hang.close(r));
      }
      // The probe as it was before run 23 (`wget -T 3`): Debian's BusyBox crashes, every try.
      const old = p
        .linuxClientScript([cell], { deadlineS: 2, hold: 1 })
        .replace(`timeout ${p.HTTP_TRY_S} wget -q`, 'wget -q -T 3');
      const [crashed] = judgeCells([cell], await run(old), ctx);
      assert.equal(crashed?.status, 'fail');
      assert.match(crashed?.output ?? '', /Segmentation fault/);
      assert.match(
        crashed?.cause ?? '',
        /the probe image's own tools failed on .* \(Segmentation fault\), not the network/,
      );
    } finally {
      await new Promise((r) => server.close(r));
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

/**
 * A loopback server answering as the echo pods `names` behind a Service would, picking one at random per
 * request; with `answered`, only that many requests are answered and every later connection is cut
 * unanswered (backends that are not reached).
 */
async function backendsServer(
  names: readonly string[],
  answered = Infinity,
): Promise<{ port: number; close: () => Promise<void> }> {
  let served = 0;
  const server = createServer((req, res) => {
    if (served++ >= answered) return void req.socket.destroy();
    res.end(`${names[Math.floor(Math.random() * names.length)] ?? ''}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('Service and NodePort cells pass only after every backend answered', () => {
  const source = e.nodes[0]!;
  const backends = ['echo-controller-01', 'echo-compute-01', 'echo-service-01'];
  const serviceCell = (port: number): p.Cell => ({
    id: 'cluster/svc-ip/controller-01/svc-mixed',
    probe: 'svc-ip',
    source: source.name,
    target: 'svc-mixed',
    kind: 'http',
    arg: `127.0.0.1:${port}`,
    answers: backends,
  });
  const ctx = (underlay: CheckResult[] = []): Parameters<typeof judgeCells>[2] => ({
    nodes: e.nodes,
    underlay,
    podTrouble: new Map(),
    osOf: (n) => e.nodes.find((x) => x.name === n)?.os,
  });
  const runScript = (cells: readonly p.Cell[]): Promise<string> =>
    new Promise<string>((resolve, reject) =>
      execFile(
        'sh',
        ['-c', p.linuxClientScript(cells, { deadlineS: 3, hold: 1 })],
        { timeout: 30_000 },
        (error, out) => (error ? reject(error) : resolve(out)),
      ),
    );

  it('Linux script: a backend that never answers fails the Service cell, naming it and the layer-1 cause', async () => {
    const some = await backendsServer(backends.slice(0, 2));
    try {
      const cells = [serviceCell(some.port)];
      const log = await runScript(cells);
      const ping = {
        id: 'underlay/ping/controller-01/service-01',
        layer: 'underlay' as const,
        probe: 'ping',
        source: 'controller-01',
        target: 'service-01',
        status: 'fail' as const,
        detail: 'no ICMP echo reply (0 received)',
      };
      const [r] = judgeCells(cells, log, ctx([ping]));
      assert.equal(r?.status, 'fail', log);
      assert.match(
        r?.detail ?? '',
        /^never answered by echo-service-01 \(answered by: (echo-\S+ )*echo-compute-01( echo-\S+)*\) in \d+ tries$/,
      );
      assert.match(
        r?.cause ?? '',
        /the backend on service-01 never answered, and layer 1 already failed there: underlay ping/,
      );
    } finally {
      await some.close();
    }
  });

  it('Linux script: a backend that answered once, then every try cut: the cell still names the ones never heard', async () => {
    // As on a real cluster with the overlay cut: the local backend answered, a try sent across got nothing (run 24).
    const cut = await backendsServer(backends.slice(0, 1), 1);
    try {
      const cells = [serviceCell(cut.port)];
      const log = await runScript(cells);
      const [r] = judgeCells(cells, log, ctx());
      assert.equal(r?.status, 'fail', log);
      assert.match(
        r?.detail ?? '',
        /^never answered by echo-compute-01 echo-service-01 \(answered by: echo-controller-01\)/,
        log,
      );
    } finally {
      await cut.close();
    }
  });

  it('Linux script: every backend answering (picked at random) passes, well within the deadline', async () => {
    const all = await backendsServer(backends);
    try {
      const cells = [serviceCell(all.port)];
      const log = await runScript(cells);
      const [r] = judgeCells(cells, log, ctx());
      assert.equal(r?.status, 'pass', log);
      // Three backends at random take a handful of tries at 0.1 s, not one a second.
      assert.ok(Number(/ ok (\d+) /.exec(log)?.[1]) >= 3, log);
    } finally {
      await all.close();
    }
  });

  it('NodePort from the deployer: a silent backend fails the cell naming it; all answering passes', async () => {
    const o = {
      access: undefined as never,
      signal: new AbortController().signal,
      underlay: [],
      select: () => true,
      matrixMs: 1500,
      pollMs: 20,
    };
    const some = await backendsServer(backends.slice(0, 2));
    const all = await backendsServer(backends);
    // As on a real cluster: a connection the load balancer sends to a silent backend gets no answer at all
    // (here every one after the first, so the last try before the deadline surely failed).
    const dropping = await backendsServer(backends.slice(0, 1), 1);
    try {
      const node = e.nodes.find((n) => n.name === 'compute-01')!;
      const url = (port: number): string => `http://127.0.0.1:${port}/`;
      const failed = judgeNodePort(node, url(some.port), await probeNodePort(url(some.port), o, backends), []);
      assert.equal(failed.status, 'fail');
      assert.match(failed.detail, /^never answered by echo-service-01 \(answered by: /);
      const cut = await probeNodePort(url(dropping.port), { ...o, matrixMs: 3000 }, backends);
      assert.equal(
        cut.output,
        'never answered by echo-compute-01 echo-service-01 (answered by: echo-controller-01)',
        'named even when the last try failed',
      );
      const passed = judgeNodePort(node, url(all.port), await probeNodePort(url(all.port), o, backends), []);
      assert.equal(passed.status, 'pass', passed.detail);
      assert.deepEqual(passed.detail.replace('answered by ', '').split(' ').sort(), [...backends].sort());
    } finally {
      await some.close();
      await all.close();
      await dropping.close();
    }
  });
});

describe('a name that does not resolve is explained by layer 1 on the way to CoreDNS', () => {
  const source = e.nodes.find((n) => n.name === 'controller-01')!;
  const [cell] = p.cellsOf(source, [], {}, e.clusterDomain, []).filter((c) => c.probe === 'pod-dns');
  const log = `KUBEMIX-CELL ${cell!.id} fail 12 0 nslookup: can't resolve 'kubernetes.default.svc.${e.clusterDomain}'\n`;
  const vxlan: CheckResult = {
    id: 'underlay/vxlan/compute-01/controller-01',
    layer: 'underlay',
    probe: 'vxlan',
    source: 'compute-01',
    target: 'controller-01',
    status: 'fail',
    detail: 'no reply through flannel.1',
  };
  const causeWith = (dnsNodes: readonly string[], underlay: CheckResult[]): string =>
    judgeCells([cell!], log, {
      nodes: e.nodes,
      underlay,
      podTrouble: new Map(),
      osOf: (n) => e.nodes.find((x) => x.name === n)?.os,
      dnsNodes,
    })[0]?.cause ?? '';

  it('CoreDNS on a node layer 1 cannot reach through the overlay: that path is the cause', () => {
    assert.match(
      causeWith(['compute-01', 'controller-01'], [vxlan]),
      /^CoreDNS on compute-01 answers from across the overlay, and layer 1 already failed there: underlay vxlan compute-01 → controller-01 \(no reply through flannel\.1\)$/,
    );
  });

  it('CoreDNS only beside the source, or layer 1 healthy: CoreDNS or kube-proxy', () => {
    for (const [nodes, underlay] of [
      [['controller-01'], [vxlan]],
      [['compute-01'], []],
      [[], [vxlan]],
    ] as const)
      assert.match(causeWith(nodes, [...underlay]), /^CoreDNS or the kube-dns Service/);
  });
});
