// Upstream parity: each Windows file kubemix renders (CNI config,
// net-conf.json, kube-proxy config, containerd config), for every backend and
// both modes, compared setting by setting with the upstream reference it
// follows (test/windows/parity/references.ts). Every difference must be in
// the reference's allow-list with a reason; a new difference, or an allowance
// that no longer matches a difference, fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { assemblePlan } from '../../src/plan/assemble.js';
import { hnsNetworkName } from '../../src/render/windows/network.js';
import { WIN } from '../../src/render/windows/paths.js';
import { modelFor, type Combo } from './fixtures.js';
import {
  cniReference,
  containerdReference,
  kubeProxyReference,
  netConfReference,
  type Cluster,
  type Reference,
} from './parity/references.js';

/** `{a: {b: [1]}}` → `{'a.b[0]': 1}`. */
export function flatten(value: unknown, prefix = ''): Record<string, unknown> {
  if (Array.isArray(value))
    return Object.assign({}, ...value.map((v, i) => flatten(v, `${prefix}[${i}]`))) as Record<string, unknown>;
  if (value !== null && typeof value === 'object') {
    return Object.assign(
      {},
      ...Object.entries(value).map(([k, v]) => flatten(v, prefix === '' ? k : `${prefix}.${k}`)),
    ) as Record<string, unknown>;
  }
  return { [prefix]: value };
}

/** Paths where the rendered settings and the reference differ (missing, extra or other value). */
export function differences(rendered: Record<string, unknown>, reference: Readonly<Record<string, unknown>>): string[] {
  const paths = new Set([...Object.keys(rendered), ...Object.keys(reference)]);
  return [...paths].filter((p) => JSON.stringify(rendered[p]) !== JSON.stringify(reference[p])).sort();
}

function assertParity(what: string, rendered: Record<string, unknown>, ref: Reference): void {
  const diff = differences(rendered, ref.settings);
  const unexplained = diff.filter((p) => ref.allowed[p] === undefined);
  const stale = Object.keys(ref.allowed).filter((p) => !diff.includes(p));
  assert.deepEqual(
    unexplained,
    [],
    `${what} differs from ${ref.source} where no reason is recorded: ${unexplained.map((p) => `${p} = ${JSON.stringify(rendered[p])} (upstream ${JSON.stringify(ref.settings[p])})`).join('; ')}`,
  );
  assert.deepEqual(stale, [], `${what}: allowances that no longer match a difference from ${ref.source}`);
}

const COMBOS: readonly Combo[] = [
  { k8s: '1.36', os: 'windows-2022', backend: 'vxlan' },
  { k8s: '1.36', os: 'windows-2025', backend: 'host-gw' },
  { k8s: '1.36', os: 'windows-2022', backend: 'vxlan', hostProcess: true },
  { k8s: '1.36', os: 'windows-2022', backend: 'host-gw', hostProcess: true },
];

function rendered(c: Combo): { files: Map<string, string>; cluster: Cluster; nodeCidr: string } {
  const model = modelFor(c);
  const { files } = assemblePlan(model);
  const node = model.nodes.find((n) => n.name === 'win-01');
  assert.ok(node);
  const n = model.cluster.network;
  return {
    files: new Map(files.filter((f) => f.node === 'win-01').map((f) => [f.remotePath, f.content])),
    cluster: {
      podCidr: n.podCidr,
      serviceCidr: n.serviceCidr,
      nodeIp: node.ip,
      nodeName: node.name.toLowerCase(),
      network: hnsNetworkName(model.overlay),
      pause: `registry.k8s.io/pause:${model.versions.pause}`,
    },
    nodeCidr: n.nodeCidr,
  };
}

const name = (c: Combo): string =>
  `${c.backend}${c.hostProcess === true ? ", the spec's images" : ', the default image'}`;

describe('Windows files match their upstream references, or say why not', () => {
  for (const c of COMBOS) {
    const { files, cluster, nodeCidr } = rendered(c);
    const text = (p: string): string => files.get(p) ?? assert.fail(`no ${p}`);
    it(`${name(c)}: CNI config`, () =>
      assertParity(
        '10-flannel.conf',
        flatten(JSON.parse(text(WIN.cniConf))),
        cniReference(cluster, c.backend, nodeCidr),
      ));
    it(`${name(c)}: net-conf.json`, () =>
      assertParity(
        'net-conf.json',
        flatten(JSON.parse(text(WIN.flannelNetConf))),
        netConfReference(cluster, c.backend),
      ));
    it(`${name(c)}: kube-proxy config`, () =>
      assertParity(
        'kube-proxy config',
        flatten(parseYaml(text(WIN.kubeProxyConfigTemplate))),
        kubeProxyReference(cluster, c.backend, WIN.kubeProxyKubeconfig),
      ));
    it(`${name(c)}: containerd config`, () =>
      assertParity(
        'config.toml',
        flatten(parseToml(text(WIN.containerdConfig))),
        containerdReference(cluster, WIN.cniBin, WIN.cniConfDir),
      ));
  }
});

describe('the parity check itself', () => {
  const { files, cluster, nodeCidr } = rendered(COMBOS[0] as Combo);
  const cni = flatten(JSON.parse(files.get(WIN.cniConf) ?? '{}'));
  it('a new difference fails: exempting the node network, or dropping the dns capability', () => {
    const ref = cniReference(cluster, 'vxlan', nodeCidr);
    assert.throws(
      () => assertParity('cni', { ...cni, 'delegate.AdditionalArgs[0].Value.Settings.Exceptions[2]': nodeCidr }, ref),
      /no reason is recorded/,
    );
    assert.throws(() => assertParity('cni', { ...cni, 'capabilities.dns': false }, ref), /capabilities\.dns/);
  });
  it('a stale allowance fails', () => {
    const ref = cniReference(cluster, 'vxlan', nodeCidr);
    assert.throws(() => assertParity('cni', { ...cni, cniVersion: '0.2.0' }, ref), /no longer match/);
  });
});
