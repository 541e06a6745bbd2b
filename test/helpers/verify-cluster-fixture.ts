// Shared by the layer-2 tests: a mixed cluster (a controller, a Linux and
// two Windows Server 2022 workers, HostProcess mode), the Node and system Pod
// objects a healthy such cluster lists, and small readers of the results.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolveModel } from '../../src/model/resolve.js';
import { readSpec } from '../../src/spec/read.js';
import type { ClusterExpectations } from '../../src/verify/cluster/expect.js';
import type { CheckResult } from '../../src/verify/types.js';
import type { KubeApiStandin, StandinScenario } from './kube-api-standin.js';
import { repoPath } from './cli.js';

export type Obj = Record<string, any>;
export const TOKEN = 'canary-verify-token-77e1';

export function mixedSpec(): string {
  return readFileSync(repoPath('examples/k8s-libvirt-1-1-1.yaml'), 'utf8')
    .replace(
      / {4}workers:\n {6}- name: compute\n {8}count: 1\n/,
      '    workers:\n      - name: worker\n        count: 1\n        os: debian-13\n      - name: compute\n        count: 2\n',
    )
    .replace(
      '  services:\n',
      '  windows:\n    hostProcess:\n      flannelImage: registry.example.com/flannel:hp\n      kubeProxyImage: registry.example.com/kube-proxy:hp\n  services:\n',
    );
}

export function mixedModel() {
  return resolveModel(readSpec({ kind: 'file', path: 'mixed.yaml', text: mixedSpec() }));
}

export function nodeObject(e: ClusterExpectations['nodes'][number], i: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: e.name, labels: { ...e.labels, 'kubernetes.io/hostname': e.name } },
    spec: {
      taints: e.taints.map((t) => {
        const m = /^([^=:]+)(?:=([^:]*))?:(\w+)$/.exec(t)!;
        return { key: m[1], ...(m[2] === undefined ? {} : { value: m[2] }), effect: m[3] };
      }),
    },
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: e.name },
      ],
      nodeInfo: { kubeletVersion: 'v1.36.1', operatingSystem: e.os, architecture: 'amd64', machineID: String(i) },
    },
  };
}

export function dsPod(ns: string, ds: string, node: string): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${ds}-${node}`,
      namespace: ns,
      ownerReferences: [{ kind: 'DaemonSet', name: ds, apiVersion: 'apps/v1', uid: ds }],
    },
    spec: { nodeName: node, containers: [] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

export function systemPods(e: ClusterExpectations): Obj[] {
  const pods = e.nodes.flatMap((n) =>
    e.daemonSets.filter((d) => d.os === n.os).map((d) => dsPod(d.namespace, d.name, n.name)),
  );
  const cp = e.nodes.find((n) => n.controlPlane)!;
  pods.push({
    ...dsPod('kube-system', 'coredns', cp.name),
    metadata: { name: 'coredns-1', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
  });
  return pods;
}

/** Gone, or Terminating after our DELETE (the stand-in's namespace controller takes a moment, as the real one does). */
export const deleted = (api: KubeApiStandin, ns: string): boolean =>
  api.namespaces.get(ns)?.['metadata'].deletionTimestamp !== undefined || !api.namespaces.has(ns);

export const get = (rs: readonly CheckResult[], id: string): CheckResult => {
  const r = rs.find((x) => x.id === id);
  assert.ok(r !== undefined, `no result ${id}; have ${rs.map((x) => x.id).join(' ')}`);
  return r;
};

/** A healthy cluster's stand-in scenario for `e`, its NodePort answered on `nodePort`. */
export function healthyScenario(e: ClusterExpectations, nodePort: number): StandinScenario {
  return {
    token: TOKEN,
    gitVersion: 'v1.36.1',
    nodes: e.nodes.map(nodeObject),
    systemPods: systemPods(e),
    runtimeClasses: [...e.runtimeClasses],
    nodePort,
  };
}

/**
 * The NodePort: what kube-proxy on a node would forward to, here a loopback
 * server answering like the echo pods behind it, one picked at random per
 * request as kube-proxy's iptables mode does (verify wants each to answer; a
 * round robin would split them between the two NodePort cells probing at once).
 */
export async function startEcho(
  ...nodes: readonly string[]
): Promise<{ readonly port: number; readonly close: () => Promise<void> }> {
  const server = createServer((_, res) => res.end(`echo-${nodes[Math.floor(Math.random() * nodes.length)] ?? ''}\n`));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
