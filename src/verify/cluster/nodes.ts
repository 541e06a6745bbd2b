// Layer 2's node and system-pod cells, judged from what the API server
// lists. Pure: objects in, CheckResults out.
import { checkId, type CheckResult, type CheckStatus } from '../types.js';
import type { ClusterExpectations, ExpectedNode } from './expect.js';
import { nameOf, podReady, podState, type NamedObject, type NodeObject, type PodObject } from './objects.js';

export interface ClusterSnapshot {
  /** kube-apiserver's gitVersion (`v1.36.1`). */
  readonly serverVersion: string;
  readonly nodes: readonly NodeObject[];
  /** Pods of the namespaces the expected DaemonSets and CoreDNS live in. */
  readonly pods: readonly PodObject[];
  readonly runtimeClasses: readonly NamedObject[];
}

/** kubelet may be up to three minors older than kube-apiserver, never newer (Kubernetes version skew policy, 1.28+). */
export const KUBELET_MAX_SKEW = 3;

type Cell = Omit<CheckResult, 'id' | 'layer'>;
const cell = (c: Cell): CheckResult => ({
  id: checkId('cluster', c.probe, c.source, c.target),
  layer: 'cluster',
  ...c,
});

function minor(version: string): number | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  return m === null ? undefined : Number(m[1]) * 1000 + Number(m[2]);
}

function taintText(t: { key?: string; value?: string; effect?: string }): string {
  return `${t.key ?? ''}${t.value === undefined || t.value === '' ? '' : `=${t.value}`}:${t.effect ?? ''}`;
}

/** Taints the node lifecycle controller and kubelet set themselves (node.kubernetes.io/*, node.cloudprovider…). */
const SYSTEM_TAINT = /^node\.(kubernetes\.io|cloudprovider\.kubernetes\.io)\//;

function nodeCells(e: ExpectedNode, n: NodeObject | undefined, serverVersion: string): CheckResult[] {
  const c = (target: string, status: CheckStatus, detail: string, cause?: string): CheckResult =>
    cell({ probe: 'node', source: e.name, target, status, detail, ...(cause === undefined ? {} : { cause }) });
  if (n === undefined)
    return [
      c(
        'ready',
        'fail',
        'not registered with the API server',
        'the kubelet did not join: see `kubemix logs` for its join step',
      ),
    ];
  const out: CheckResult[] = [];
  const ready = n.status?.conditions?.find((x) => x.type === 'Ready');
  out.push(
    ready?.status === 'True'
      ? c('ready', 'pass', 'Ready')
      : c(
          'ready',
          'fail',
          `not Ready (${ready?.status ?? 'no Ready condition'}${ready?.reason === undefined ? '' : `: ${ready.reason}`}${ready?.message === undefined ? '' : ` — ${ready.message}`})`,
          e.os === 'windows'
            ? 'kubelet or the CNI on the Windows node: the node is Ready once flanneld/Calico set up its HNS network'
            : 'kubelet or the CNI on the node (NetworkReady=false until the CNI pod runs)',
        ),
  );
  const info = n.status?.nodeInfo;
  const osArch = `${info?.operatingSystem ?? '?'}/${info?.architecture ?? '?'}`;
  out.push(
    osArch === `${e.os}/${e.arch}`
      ? c('os-arch', 'pass', osArch)
      : c('os-arch', 'fail', `${osArch}, planned ${e.os}/${e.arch}`, 'another host answers to this node name'),
  );
  const labels = n.metadata?.labels ?? {};
  if (e.windowsBuild !== undefined) {
    const build = labels['node.kubernetes.io/windows-build'];
    out.push(
      build === e.windowsBuild
        ? c('windows-build', 'pass', build)
        : c(
            'windows-build',
            'fail',
            `node.kubernetes.io/windows-build is ${build ?? 'missing'}, planned ${e.windowsBuild}`,
            'the host runs another Windows Server release than planned: process-isolated images of the planned build will not start on it',
          ),
    );
  }
  const wrongLabels = Object.entries(e.labels)
    .filter(([k, v]) => k !== 'node.kubernetes.io/windows-build' && labels[k] !== v)
    .map(([k, v]) => `${k}=${v} (is ${labels[k] ?? 'missing'})`);
  out.push(
    wrongLabels.length === 0
      ? c('labels', 'pass', 'as planned')
      : c('labels', 'fail', `labels not as planned: ${wrongLabels.join(', ')}`),
  );
  const actual = (n.spec?.taints ?? []).map(taintText);
  const missing = e.taints.filter((t) => !actual.includes(t));
  const extra = actual.filter((t) => !e.taints.includes(t) && !SYSTEM_TAINT.test(t));
  out.push(
    missing.length === 0 && extra.length === 0
      ? c('taints', 'pass', actual.length === 0 ? 'none' : actual.join(', '))
      : c(
          'taints',
          'fail',
          [
            missing.length > 0 ? `missing ${missing.join(', ')}` : '',
            extra.length > 0 ? `not planned ${extra.join(', ')}` : '',
          ]
            .filter((x) => x !== '')
            .join('; '),
          missing.some((t) => t.startsWith('os=windows'))
            ? 'without the os=windows taint Linux pods get scheduled onto the Windows node'
            : undefined,
        ),
  );
  const kubelet = info?.kubeletVersion ?? '';
  const k = minor(kubelet);
  const s = minor(serverVersion);
  const skew = k === undefined || s === undefined ? undefined : s - k;
  out.push(
    skew !== undefined && skew >= 0 && skew <= KUBELET_MAX_SKEW
      ? c('kubelet', 'pass', `${kubelet} (API server ${serverVersion})`)
      : c(
          'kubelet',
          'fail',
          `kubelet ${kubelet || '?'} with API server ${serverVersion}: outside the supported skew (kubelet at most ${KUBELET_MAX_SKEW} minors older, never newer)`,
          'upgrade the node: `kubemix upgrade`',
        ),
  );
  return out;
}

export function judgeNodes(e: ClusterExpectations, s: ClusterSnapshot): CheckResult[] {
  return e.nodes.flatMap((n) =>
    nodeCells(
      n,
      s.nodes.find((x) => nameOf(x) === n.name),
      s.serverVersion,
    ),
  );
}

function ownedBy(p: PodObject, kind: string, name: string): boolean {
  return p.metadata?.ownerReferences?.some((o) => o.kind === kind && o.name === name) === true;
}

/** The CNI and kube-proxy on every node of each OS, CoreDNS on Linux, the RuntimeClasses. */
export function judgeSystem(e: ClusterExpectations, s: ClusterSnapshot): CheckResult[] {
  const out: CheckResult[] = [];
  for (const n of e.nodes) {
    for (const probe of ['cni', 'kube-proxy'] as const) {
      const ds = e.daemonSets.find((d) => d.probe === probe && d.os === n.os);
      const c = (status: CheckStatus, detail: string, cause?: string): CheckResult =>
        cell({
          probe: 'system-pods',
          source: n.name,
          target: probe,
          status,
          detail,
          ...(cause === undefined ? {} : { cause }),
        });
      if (ds === undefined) {
        out.push(
          c(
            'skip',
            e.windowsServices && n.os === 'windows'
              ? 'runs as a Windows service on the node, not a pod: not visible through the API (see kubemix diagnose)'
              : 'no DaemonSet planned for this OS',
          ),
        );
        continue;
      }
      const pod = s.pods.find(
        (p) =>
          p.metadata?.namespace === ds.namespace && ownedBy(p, 'DaemonSet', ds.name) && p.spec?.nodeName === n.name,
      );
      if (pod === undefined)
        out.push(
          c(
            'fail',
            `no pod of DaemonSet ${ds.namespace}/${ds.name} on the node`,
            n.os === 'windows'
              ? `the DaemonSet's nodeSelector/tolerations do not admit the Windows node (os=windows taint, windows-build label), or it was not applied`
              : 'the DaemonSet was not applied, or its tolerations do not admit the node',
          ),
        );
      else if (!podReady(pod))
        out.push(
          c(
            'fail',
            `${ds.name} pod ${nameOf(pod)} not Ready (${podState(pod)})`,
            `read its log: kubectl -n ${ds.namespace} logs ${nameOf(pod)}`,
          ),
        );
      else out.push(c('pass', `${nameOf(pod)} Ready`));
    }
  }
  const dns = s.pods.filter(
    (p) => p.metadata?.namespace === 'kube-system' && p.metadata.labels?.['k8s-app'] === 'kube-dns',
  );
  const linux = new Set(e.nodes.filter((n) => n.os === 'linux').map((n) => n.name));
  const ready = dns.filter(podReady);
  const misplaced = dns.filter((p) => p.spec?.nodeName !== undefined && !linux.has(p.spec.nodeName));
  const dnsCell = (status: CheckStatus, detail: string, cause?: string): CheckResult =>
    cell({
      probe: 'coredns',
      source: 'kube-system',
      target: 'coredns',
      status,
      detail,
      ...(cause === undefined ? {} : { cause }),
    });
  if (misplaced.length > 0)
    out.push(
      dnsCell(
        'fail',
        `CoreDNS pod ${nameOf(misplaced[0]!)} on ${misplaced[0]!.spec?.nodeName ?? '?'}, not a Linux node`,
        'a Linux pod placed on a Windows node: the Windows node lacks the os=windows taint, or CoreDNS lacks its kubernetes.io/os=linux nodeSelector',
      ),
    );
  else if (ready.length === 0)
    out.push(
      dnsCell(
        'fail',
        dns.length === 0
          ? 'no CoreDNS pod (k8s-app=kube-dns) in kube-system'
          : `no CoreDNS pod Ready (${podState(dns[0]!)})`,
        'CoreDNS waits for the CNI: check the cni cells',
      ),
    );
  else out.push(dnsCell('pass', `${ready.length} of ${dns.length} Ready on Linux`));
  for (const rc of e.runtimeClasses) {
    const found = s.runtimeClasses.some((r) => nameOf(r) === rc);
    out.push(
      cell({
        probe: 'runtimeclass',
        source: 'cluster',
        target: rc,
        status: found ? 'pass' : 'fail',
        detail: found ? 'present' : `RuntimeClass ${rc} missing`,
        ...(found ? {} : { cause: 'the cluster manifests were not applied (task cluster-manifests)' }),
      }),
    );
  }
  return out;
}
