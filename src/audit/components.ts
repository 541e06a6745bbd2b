// Which credential each component runs with, read from what the plan
// actually ships (the HostProcess DaemonSets and their launchers,
// kube-proxy's config, any service definition or kubeconfig, the cluster
// manifests, any task that mints a token), never from what the code means to do. Calico's Windows
// components run what the operator renders from our Installation. A kubeconfig the
// audit cannot trace is an `unknown` credential, which fails the audit.
import { parse, parseAllDocuments } from 'yaml';
import { HOSTPROCESS_DAEMONSETS } from '../render/manifests/windows-hostprocess.js';
import { WIN } from '../render/windows/paths.js';
import type { Plan, Task } from '../plan/types.js';
import type { PlanNode } from '../model/types.js';
import {
  CALICO_CNI_SA,
  CALICO_NODE_SA,
  CALICO_SYSTEM,
  calicoCniRequests,
  calicoNodeWindowsRequests,
} from './calico.js';
import { executorRequests } from './executor.js';
import { corednsRequests, flanneldRequests, kubeletRequests, kubeProxyRequests } from './upstream.js';
import type { Component, Credential } from './types.js';

type Obj = Record<string, unknown>;

export interface AuditInput {
  readonly plan: Plan;
  readonly files: readonly { readonly node: string; readonly remotePath: string; readonly content: string }[];
}

const KUBELET_CONF = ['/etc/kubernetes/kubelet.conf', WIN.kubeletKubeconfig];
const ADMIN_CONF = '/etc/kubernetes/admin.conf';

class PlanView {
  constructor(readonly input: AuditInput) {}

  file(node: string, path: string): string | undefined {
    return this.input.files.find((f) => f.node === node && f.remotePath === path)?.content;
  }

  /** Every object of the cluster manifests, with the manifest it is in. */
  manifests(): { readonly object: Obj; readonly file: string }[] {
    return this.input.files
      .filter((f) => f.node === 'cluster' && f.remotePath.startsWith('manifests/'))
      .flatMap((f) =>
        parseAllDocuments(f.content).map((d) => ({ object: (d.toJS() ?? {}) as Obj, file: f.remotePath })),
      );
  }

  /** The credential a kubeconfig at `path` on `node` holds. */
  kubeconfig(node: string, path: string): { credential: Credential; source: string } {
    if (KUBELET_CONF.includes(path))
      return { credential: { kind: 'node', node, file: path }, source: `${path} (the kubelet's, kubeadm join)` };
    if (path === ADMIN_CONF) return { credential: { kind: 'admin', file: path }, source: `${path} (kubeadm)` };
    const text = this.file(node, path);
    if (text === undefined)
      return { credential: { kind: 'unknown', file: path }, source: `${path}: not a file the plan ships` };
    const users = ((parse(text) ?? {}) as Obj)['users'];
    const user = (Array.isArray(users) ? ((users[0] ?? {}) as Obj)['user'] : undefined) as Obj | undefined;
    const tokenFile = user?.['tokenFile'];
    if (typeof tokenFile !== 'string')
      return { credential: { kind: 'unknown', file: path }, source: `${path}: no tokenFile` };
    const token = this.tokenFile(node, tokenFile);
    return { credential: token.credential, source: `${path} → ${token.source}` };
  }

  /** A token file on a node: written by a task from a secret that a minting task captured. */
  tokenFile(node: string, path: string): { credential: Credential; source: string } {
    const writers = this.input.plan.tasks.filter((t) => t.host === node && t.apply.script.includes(path));
    for (const w of writers) {
      for (const secret of w.secrets) {
        const mint = this.mintOf(secret);
        if (mint !== undefined)
          return {
            credential: { kind: 'serviceaccount', ...mint.sa, how: `TokenRequest (${mint.task.id})` },
            source: `${path} ← secret ${secret}`,
          };
      }
    }
    return { credential: { kind: 'unknown', file: path }, source: `${path}: no task fills it from a minted token` };
  }

  mintOf(secret: string): { task: Task; sa: { namespace: string; name: string } } | undefined {
    for (const task of this.input.plan.tasks) {
      if (!(task.captures ?? []).some((c) => c.name === secret)) continue;
      const m = /-n (\S+) create token (\S+)/.exec(task.apply.script);
      if (m !== null) return { task, sa: { namespace: m[1] ?? '', name: m[2] ?? '' } };
    }
    return undefined;
  }

  /** The credential of a pod: an explicit --kubeconfig-file / kubeconfig, else its projected ServiceAccount token. */
  podCredential(ds: Obj, node: string, kubeconfig: string | undefined): { credential: Credential; source: string } {
    if (kubeconfig !== undefined && kubeconfig !== '') return this.kubeconfig(node, kubeconfig);
    const spec = podSpec(ds);
    const ns = String(((ds['metadata'] ?? {}) as Obj)['namespace'] ?? 'default');
    const sa = String(spec['serviceAccountName'] ?? 'default');
    return {
      credential: { kind: 'serviceaccount', namespace: ns, name: sa, how: 'projected (pod)' },
      source: `DaemonSet ${ns}/${String(((ds['metadata'] ?? {}) as Obj)['name'])} serviceAccountName`,
    };
  }
}

function podSpec(ds: Obj): Obj {
  return (((((ds['spec'] ?? {}) as Obj)['template'] ?? {}) as Obj)['spec'] as Obj) ?? {};
}

function container(ds: Obj): Obj {
  const cs = podSpec(ds)['containers'];
  return (Array.isArray(cs) ? cs[0] : {}) as Obj;
}

const flag = (args: readonly string[], name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);
const envNames = (c: Obj): string[] =>
  Array.isArray(c['env']) ? (c['env'] as Obj[]).map((e) => String(e['name'])) : [];
const unxml = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export function components(input: AuditInput): Component[] {
  const view = new PlanView(input);
  const k8s = input.plan.nodes.filter((n) => n.role !== 'services');
  const linux = k8s.filter((n) => n.osFamily === 'linux');
  const windows = k8s.filter((n) => n.osFamily === 'windows');
  const daemonSets = view.manifests().filter((m) => m.object['kind'] === 'DaemonSet');
  const ds = (name: string): Obj | undefined =>
    daemonSets.find((m) => ((m.object['metadata'] ?? {}) as Obj)['name'] === name)?.object;
  const out: Component[] = [];
  for (const n of k8s) {
    const file = n.osFamily === 'windows' ? WIN.kubeletKubeconfig : '/etc/kubernetes/kubelet.conf';
    out.push({
      name: 'kubelet',
      os: n.osFamily,
      runsOn: n.name,
      node: n.name,
      credential: { kind: 'node', node: n.name, file },
      credentialSource: `${file} (kubeadm join, TLS bootstrap)`,
      requests: kubeletRequests(n.name.toLowerCase()),
    });
  }
  for (const n of linux) {
    out.push({
      name: 'kube-proxy',
      os: 'linux',
      runsOn: n.name,
      node: n.name,
      credential: { kind: 'serviceaccount', namespace: 'kube-system', name: 'kube-proxy', how: 'projected (pod)' },
      credentialSource: "kubeadm's kube-proxy DaemonSet (cmd/kubeadm/app/phases/addons/proxy)",
      requests: kubeProxyRequests(n.name.toLowerCase()),
    });
  }
  if (linux.length > 0) {
    out.push({
      name: 'CoreDNS',
      os: 'linux',
      runsOn: 'Linux nodes (Deployment)',
      credential: { kind: 'serviceaccount', namespace: 'kube-system', name: 'coredns', how: 'projected (pod)' },
      credentialSource: "kubeadm's CoreDNS Deployment (cmd/kubeadm/app/phases/addons/dns)",
      requests: corednsRequests(),
    });
  }
  const flannel = ds('kube-flannel-ds');
  if (flannel !== undefined) {
    const c = container(flannel);
    const args = strs(c['args']);
    const podNs = envNames(c).includes('NODE_NAME')
      ? undefined
      : String(((flannel['metadata'] ?? {}) as Obj)['namespace']);
    for (const n of linux) {
      const cred = view.podCredential(flannel, n.name, flag(args, 'kubeconfig-file'));
      out.push({
        name: 'flanneld',
        os: 'linux',
        runsOn: n.name,
        node: n.name,
        credential: cred.credential,
        credentialSource: cred.source,
        requests: flanneldRequests(n.name.toLowerCase(), podNs),
      });
    }
  }
  for (const n of windows) out.push(...windowsComponents(view, n, ds));
  if (calicoWindows(input)) for (const n of windows) out.push(...calicoWindowsComponents(n));
  out.push(...minting(view), ...nodeRenewals(view, windows));
  const executor = executorRequests(input.plan, view.manifests());
  if (executor.length > 0)
    out.push({
      name: "executor's kubectl",
      os: 'linux',
      runsOn: 'first controller (kubemix up)',
      credential: { kind: 'admin', file: ADMIN_CONF },
      credentialSource: `--kubeconfig=${ADMIN_CONF} in the tasks' scripts`,
      requests: executor,
    });
  return out;
}

function windowsComponents(view: PlanView, n: PlanNode, ds: (name: string) => Obj | undefined): Component[] {
  const out: Component[] = [];
  const name = n.name.toLowerCase();
  // An earlier version's service definition, if a plan ever ships one again, is read as what it runs with.
  const service = view.file(n.name, `${WIN.flanneldDir}\\flanneld-service.xml`);
  const pod = ds(HOSTPROCESS_DAEMONSETS.flannel);
  if (service !== undefined) {
    const args = unxml(/<arguments>([^<]*)<\/arguments>/.exec(service)?.[1] ?? '').split(/\s+/);
    const path = flag(args, 'kubeconfig-file');
    const cred =
      path === undefined
        ? {
            credential: { kind: 'unknown', file: '(none)' } as Credential,
            source: 'flanneld service without --kubeconfig-file',
          }
        : view.kubeconfig(n.name, path);
    out.push({
      name: 'flanneld (service)',
      os: 'windows',
      runsOn: n.name,
      node: n.name,
      credential: cred.credential,
      credentialSource: `flanneld-service.xml --kubeconfig-file → ${cred.source}`,
      requests: flanneldRequests(name, undefined),
    });
  } else if (pod !== undefined) {
    const c = container(pod);
    const launcher = view.file(n.name, WIN.flanneldLauncher) ?? '';
    // The pod starts flanneld through its launcher: a --kubeconfig-file there (or in the container's args) wins.
    const kubeconfig = flag(strs(c['args']), 'kubeconfig-file') ?? /--kubeconfig-file=([^'"\s]+)/.exec(launcher)?.[1];
    const cred = view.podCredential(pod, n.name, kubeconfig);
    const podNs = envNames(c).includes('NODE_NAME') ? undefined : String(((pod['metadata'] ?? {}) as Obj)['namespace']);
    out.push({
      name: 'flanneld (HostProcess)',
      os: 'windows',
      runsOn: n.name,
      node: n.name,
      credential: cred.credential,
      credentialSource: cred.source,
      requests: flanneldRequests(name, podNs),
    });
  }
  const proxyTask = view.input.plan.tasks.find((t) => t.host === n.name && t.name === 'win-kube-proxy');
  const proxyPod = ds(HOSTPROCESS_DAEMONSETS.kubeProxy);
  const launcher = view.file(n.name, WIN.kubeProxyLauncher) ?? '';
  const config =
    proxyTask !== undefined
      ? /--config=(\S+?\.yaml)/.exec(proxyTask.apply.script)?.[1]
      : proxyPod === undefined
        ? undefined
        : (flag(strs(container(proxyPod)['args']), 'config') ?? /--config=([^'"\s]+?\.yaml)/.exec(launcher)?.[1]);
  if (config !== undefined) {
    const text = view.file(n.name, config) ?? view.file(n.name, config.replace(/\.yaml$/, '.template.yaml')) ?? '';
    const clientConnection = (((parse(text) ?? {}) as Obj)['clientConnection'] ?? {}) as Obj;
    const kubeconfig = typeof clientConnection['kubeconfig'] === 'string' ? clientConnection['kubeconfig'] : '';
    const cred =
      proxyPod !== undefined && proxyTask === undefined
        ? view.podCredential(proxyPod, n.name, kubeconfig)
        : view.kubeconfig(n.name, kubeconfig);
    out.push({
      name: `kube-proxy (${proxyTask !== undefined ? 'service' : 'HostProcess'})`,
      os: 'windows',
      runsOn: n.name,
      node: n.name,
      credential: cred.credential,
      credentialSource: `${config} clientConnection.kubeconfig → ${cred.source}`,
      requests: kubeProxyRequests(name),
    });
  }
  return out;
}

/** The plan's Installation turns on the Windows dataplane: the operator runs calico-node-windows. */
export function calicoWindows(input: AuditInput): boolean {
  return new PlanView(input)
    .manifests()
    .some(
      (m) =>
        m.object['kind'] === 'Installation' &&
        ((((m.object['spec'] ?? {}) as Obj)['calicoNetwork'] ?? {}) as Obj)['windowsDataplane'] === 'HNS',
    );
}

/** calico-node-windows (HostProcess DaemonSet the operator renders) and calico.exe, on one Windows node. */
function calicoWindowsComponents(n: PlanNode): Component[] {
  const sa = (name: string, how: string): Credential => ({
    kind: 'serviceaccount',
    namespace: CALICO_SYSTEM,
    name,
    how,
  });
  return [
    {
      name: 'calico-node-windows (HostProcess, operator)',
      os: 'windows',
      runsOn: n.name,
      node: n.name,
      credential: sa(CALICO_NODE_SA, 'projected (pod)'),
      credentialSource:
        'tigera/operator pkg/render/windows.go: DaemonSet calico-system/calico-node-windows, serviceAccountName calico-node',
      requests: calicoNodeWindowsRequests(n.name.toLowerCase()),
    },
    {
      name: 'Calico CNI plugin (calico.exe)',
      os: 'windows',
      runsOn: n.name,
      node: n.name,
      credential: sa(CALICO_CNI_SA, 'TokenRequest by calico-node (calico-kubeconfig)'),
      credentialSource: `${WIN.cniConfDir}\\calico-kubeconfig (written by calico-node-windows' install-cni)`,
      requests: calicoCniRequests(),
    },
  ];
}

/** Tasks that mint ServiceAccount tokens (`kubectl create token`) and the credential they use. */
function minting(view: PlanView): Component[] {
  return view.input.plan.tasks.flatMap((t): Component[] => {
    const m = /--kubeconfig[= ](\S+) -n (\S+) create token (\S+)/.exec(t.apply.script);
    if (m === null) return [];
    const cred =
      m[1] === ADMIN_CONF
        ? { credential: { kind: 'admin', file: ADMIN_CONF } as Credential, source: `${ADMIN_CONF} (kubeadm)` }
        : view.kubeconfig(t.host, m[1] ?? '');
    return [
      {
        name: 'token minting and renewal',
        os: 'linux',
        runsOn: `${t.host} (${t.name}, every kubemix up)`,
        credential: cred.credential,
        credentialSource: cred.source,
        requests: [
          {
            verb: 'create',
            group: '',
            resource: 'serviceaccounts/token',
            namespace: m[2] ?? '',
            name: m[3] ?? '',
            source: `kubemix ${t.id}`,
          },
        ],
      },
    ];
  });
}

/** The token files the node's kubeconfigs name. */
function tokenFiles(view: PlanView, node: string): string[] {
  return view.input.files
    .filter((f) => f.node === node)
    .flatMap((f) => [...f.content.matchAll(/tokenFile: '([^']+)'/g)].map((m) => m[1] ?? ''));
}

/** Scripts on Windows nodes that call the TokenRequest API themselves, with the token file they send. */
function nodeRenewals(view: PlanView, windows: readonly PlanNode[]): Component[] {
  const out: Component[] = [];
  for (const n of windows) {
    for (const f of view.input.files.filter((x) => x.node === n.name)) {
      const url = /\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)\/token/.exec(f.content);
      if (url === null) continue;
      const tokenPath = tokenFiles(view, n.name).find((p) => f.content.includes(p));
      const cred =
        tokenPath === undefined
          ? { credential: { kind: 'unknown', file: f.remotePath } as Credential, source: 'no token file' }
          : view.tokenFile(n.name, tokenPath);
      out.push({
        name: 'token renewal (on the node)',
        os: 'windows',
        runsOn: n.name,
        node: n.name,
        credential: cred.credential,
        credentialSource: `${f.remotePath} sends ${cred.source}`,
        requests: [
          {
            verb: 'create',
            group: '',
            resource: 'serviceaccounts/token',
            namespace: url[1] ?? '',
            name: url[2] ?? '',
            source: `kubemix ${f.remotePath}`,
          },
        ],
      });
    }
  }
  return out;
}
