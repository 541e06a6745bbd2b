// A real control plane on loopback: etcd, kube-apiserver and
// kube-controller-manager built here from the Go module proxy (kube-binaries.ts),
// started once per test file and stopped by pid. Everything about them is
// kubeadm's own: `kubeadm init --dry-run` (KUBEADM_INIT_DRYRUN_DIR: nothing is
// written outside the temp dir) makes the certificates, kubeconfigs and static
// Pod manifests, and each component runs with the command line its manifest
// gives (authorization Node,RBAC, admission NodeRestriction, service-account
// keys, front proxy, bootstrap tokens…). Only what a process on this machine
// must change is changed, each in OVERRIDES below: loopback addresses and free
// ports (tests run two at a time), the kubeconfigs' server URL, and an egress
// selector: whatever the API server would dial besides etcd (webhooks,
// kubelets) goes to egress-proxy.ts, which connects only what a test routes.
// Children run under setpriv --pdeathsig=KILL, so they die with the test process.
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { freePort } from './docker-registry.js';
import { startEgressProxy, type EgressProxy } from './egress-proxy.js';
import { kubeBinaries, runBuilt, spawnBuilt, type KubeCommand, type BuiltTool } from './kube-binaries.js';
import { docsOf, type Obj } from './kubeadm-configs.js';
import { scratch } from './shapes.js';

/** The node name kubeadm's configuration gives the control plane (no Node object exists). */
export const CONTROL_PLANE_NODE = 'fixture-cp';
/** Written into kubeadm's files only, never dialled: every address flag is overridden with loopback. */
const ADVERTISED = '192.0.2.1';
export const POD_CIDR = '10.244.0.0/16';
export const SERVICE_CIDR = '10.96.0.0/12';

export interface ControlPlaneOptions {
  /** Name for the temp dir (kept short: the egress socket's path must fit a unix socket). */
  readonly name: string;
}

export interface KubeResponse {
  readonly status: number;
  readonly body: any;
  readonly warnings: readonly string[];
}

export interface ControlPlane {
  readonly dir: string;
  /** https://127.0.0.1:PORT */
  readonly url: string;
  /** The cluster CA (kubeadm's), PEM. */
  readonly ca: string;
  readonly caKeyPath: string;
  readonly caCertPath: string;
  /** kubeconfig files rewritten for loopback: super-admin (system:masters), admin (kubeadm:cluster-admins). */
  readonly kubeconfig: { readonly superAdmin: string; readonly admin: string };
  /** kubeadm's configuration for this control plane (for `kubeadm init phase … --config`). */
  readonly kubeadmConfig: string;
  /** The API server's only way to a webhook or any other cluster address (egress-proxy.ts). */
  readonly egress: EgressProxy;
  /** A request as the super-admin (system:masters: bypasses authorization, not admission). */
  call(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse>;
  /** The same with another identity's bearer token (RBAC and admission apply). */
  callAs(token: string, method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse>;
  /** Server-side apply (fieldManager kubemix, force, fieldValidation Strict), as kubemix's `kubectl apply --server-side --force-conflicts`. */
  apply(object: Obj, dryRun: boolean): Promise<KubeResponse>;
  /** The REST path of an object (collection when `name` is false). */
  pathOf(object: Obj, withName?: boolean): Promise<string>;
  /** kubeadm 1.36 against this API server, as the super-admin. */
  kubeadm(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** etcdctl against this etcd. */
  etcdctl(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Waits until `check` holds (polling), or throws naming `what`. */
  until(what: string, check: () => Promise<boolean>, ms?: number): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
}

function flagsToArgs(flags: Map<string, string>): string[] {
  return [...flags].map(([k, v]) => (v === '' ? `--${k}` : `--${k}=${v}`));
}

function manifestFlags(path: string): Map<string, string> {
  const pod = docsOf(readFileSync(path, 'utf8'))[0] as Obj;
  const command = pod['spec']['containers'][0]['command'] as string[];
  return new Map(
    command.slice(1).map((a) => {
      const eq = a.indexOf('=');
      return eq < 0 ? [a.slice(2), ''] : [a.slice(2, eq), a.slice(eq + 1)];
    }),
  );
}

/** A kubeconfig kubeadm wrote, pointed at `url`; returns the new file's path. */
function loopbackKubeconfig(from: string, to: string, url: string): string {
  const doc = parse(readFileSync(from, 'utf8')) as Obj;
  for (const c of doc['clusters'] as Obj[]) c['cluster']['server'] = url;
  writeFileSync(to, stringify(doc), { mode: 0o600 });
  return to;
}

function userCredentials(kubeconfig: string): { cert: string; key: string } {
  const user = ((parse(readFileSync(kubeconfig, 'utf8')) as Obj)['users'] as Obj[])[0]?.['user'] as Obj;
  const b64 = (k: string) => Buffer.from(String(user[k]), 'base64').toString('utf8');
  return { cert: b64('client-certificate-data'), key: b64('client-key-data') };
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const bins = kubeBinaries();
  const tmp = scratch(`cp-${options.name.slice(0, 24)}`);
  const dir = tmp.dir;
  const k = join(dir, 'kubernetes');
  const [apiPort, etcdClient, etcdPeer, etcdMetrics, kcmPort] = await Promise.all(
    Array.from({ length: 5 }, () => freePort()),
  );
  const url = `https://127.0.0.1:${apiPort}`;
  const kubeadmConfig = join(dir, 'kubeadm.yaml');
  writeFileSync(
    kubeadmConfig,
    [
      {
        apiVersion: 'kubeadm.k8s.io/v1beta4',
        kind: 'InitConfiguration',
        localAPIEndpoint: { advertiseAddress: ADVERTISED, bindPort: apiPort },
        nodeRegistration: { name: CONTROL_PLANE_NODE, taints: [], criSocket: 'unix:///run/containerd/containerd.sock' },
      },
      {
        apiVersion: 'kubeadm.k8s.io/v1beta4',
        kind: 'ClusterConfiguration',
        kubernetesVersion: bins.version('1.36'),
        controlPlaneEndpoint: `127.0.0.1:${apiPort}`,
        certificatesDir: k,
        etcd: { local: { dataDir: join(dir, 'etcd') } },
        networking: { podSubnet: POD_CIDR, serviceSubnet: SERVICE_CIDR, dnsDomain: 'cluster.local' },
        apiServer: { certSANs: ['127.0.0.1', 'localhost'] },
      },
    ]
      .map((d) => stringify(d))
      .join('---\n'),
  );
  const dry = await runBuilt(
    { name: 'kubeadm', release: '1.36' },
    // Preflight checks this machine (and looks the node name up in DNS): skipped, nothing of it is used.
    ['init', '--dry-run', '--config', kubeadmConfig, '--skip-phases=preflight'],
    { env: { ...process.env, KUBEADM_INIT_DRYRUN_DIR: k }, timeoutMs: 180_000 },
  );
  if (dry.code !== 0) throw new Error(`kubeadm init --dry-run for the fixture: ${dry.stderr}`);

  const superAdmin = loopbackKubeconfig(join(k, 'super-admin.conf'), join(dir, 'super-admin.conf'), url);
  const admin = loopbackKubeconfig(join(k, 'admin.conf'), join(dir, 'admin.conf'), url);
  const cmConf = loopbackKubeconfig(join(k, 'controller-manager.conf'), join(dir, 'controller-manager.conf'), url);
  // Webhooks (by Service or URL), aggregated APIs and kubelets are reached through the egress proxy only.
  const proxy = await startEgressProxy(join(dir, 'egress.sock'));
  const egress = join(dir, 'egress-selector.yaml');
  const viaProxy = { proxyProtocol: 'HTTPConnect', transport: { uds: { udsName: proxy.socket } } };
  writeFileSync(
    egress,
    stringify({
      apiVersion: 'apiserver.k8s.io/v1beta1',
      kind: 'EgressSelectorConfiguration',
      egressSelections: [
        { name: 'cluster', connection: viaProxy },
        { name: 'controlplane', connection: viaProxy },
        { name: 'etcd', connection: { proxyProtocol: 'Direct' } },
      ],
    }),
  );

  /** What differs from kubeadm's manifests, and why: nothing else does. */
  const OVERRIDES: Record<'etcd' | KubeCommand, Record<string, string>> = {
    etcd: {
      'listen-client-urls': `https://127.0.0.1:${etcdClient}`,
      'advertise-client-urls': `https://127.0.0.1:${etcdClient}`,
      'listen-peer-urls': `https://127.0.0.1:${etcdPeer}`,
      'initial-advertise-peer-urls': `https://127.0.0.1:${etcdPeer}`,
      'initial-cluster': `${CONTROL_PLANE_NODE}=https://127.0.0.1:${etcdPeer}`,
      'listen-metrics-urls': `http://127.0.0.1:${etcdMetrics}`,
    },
    'kube-apiserver': {
      'advertise-address': '127.0.0.1',
      // kubeadm leaves bind-address at 0.0.0.0; a test listens on loopback only.
      'bind-address': '127.0.0.1',
      'secure-port': String(apiPort),
      'etcd-servers': `https://127.0.0.1:${etcdClient}`,
      'egress-selector-config-file': egress,
    },
    'kube-controller-manager': {
      // kubeadm's manifest names /etc/kubernetes/controller-manager.conf (a constant): the same file, for loopback.
      kubeconfig: cmConf,
      'authentication-kubeconfig': cmConf,
      'authorization-kubeconfig': cmConf,
      'secure-port': String(kcmPort),
    },
    kubeadm: {},
  };
  const running: Running[] = [];
  const start = (name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager'): void => {
    const flags = manifestFlags(join(k, `${name}.yaml`));
    for (const [f, v] of Object.entries(OVERRIDES[name])) flags.set(f, v);
    const log = join(dir, `${name}.log`);
    const fd = openSync(log, 'a');
    const tool: BuiltTool = name === 'etcd' ? { name: 'etcd' } : { name, release: '1.36' };
    const child = spawnBuilt(tool, flagsToArgs(flags), { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    running.push({ name, child, log });
  };
  const stop = async (): Promise<void> => {
    for (const r of [...running].reverse()) {
      if (r.child.pid === undefined || r.child.exitCode !== null || r.child.signalCode !== null) continue;
      const exited = new Promise((resolve) => r.child.once('exit', resolve));
      process.kill(r.child.pid, 'SIGTERM');
      const late = setTimeout(() => r.child.pid !== undefined && r.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(late);
    }
    running.length = 0;
    process.off('exit', killAll);
    await proxy.close();
    tmp.remove();
  };
  const killAll = (): void => {
    for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  };
  process.on('exit', killAll);

  const ca = readFileSync(join(k, 'ca.crt'), 'utf8');
  const masters = userCredentials(superAdmin);
  const send = (
    auth: { cert: string; key: string } | { token: string },
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<KubeResponse> =>
    new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const headers: Record<string, string> = { accept: 'application/json' };
      if (data !== undefined) headers['content-type'] = contentType;
      if ('token' in auth) headers['authorization'] = `Bearer ${auth.token}`;
      const req = request(
        `${url}${path}`,
        {
          method,
          ca,
          headers,
          timeout: 60_000,
          ...('token' in auth ? {} : { cert: auth.cert, key: auth.key }),
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON (healthz): the text
            }
            const w = res.headers['warning'];
            resolve({
              status: res.statusCode ?? 0,
              body: parsed,
              warnings: w === undefined ? [] : Array.isArray(w) ? w : [w],
            });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
      req.on('error', reject);
      req.end(data);
    });
  const call = (method: string, path: string, body?: unknown, contentType?: string) =>
    send(masters, method, path, body, contentType);

  const until = async (what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> => {
    const end = Date.now() + ms;
    for (;;) {
      const dead = running.find((r) => r.child.exitCode !== null || r.child.signalCode !== null);
      if (dead !== undefined)
        throw new Error(
          `${dead.name} exited while waiting for ${what}:\n${readFileSync(dead.log, 'utf8').slice(-3000)}`,
        );
      if (await check().catch(() => false)) return;
      if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s (logs in ${dir})`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  const mappings = new Map<string, { resource: string; namespaced: boolean }>();
  const pathOf = async (o: Obj, withName = true): Promise<string> => {
    const apiVersion = String(o['apiVersion']);
    const kind = String(o['kind']);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    let m = mappings.get(`${apiVersion}/${kind}`);
    if (m === undefined) {
      const list = await call('GET', base);
      for (const r of (list.body?.['resources'] ?? []) as Obj[])
        if (!String(r['name']).includes('/'))
          mappings.set(`${apiVersion}/${r['kind']}`, {
            resource: String(r['name']),
            namespaced: r['namespaced'] === true,
          });
      m = mappings.get(`${apiVersion}/${kind}`);
    }
    if (m === undefined) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
    const ns = m.namespaced ? `/namespaces/${String(o['metadata']?.['namespace'] ?? 'default')}` : '';
    return `${base}${ns}/${m.resource}${withName ? `/${String(o['metadata']?.['name'])}` : ''}`;
  };

  try {
    start('etcd');
    start('kube-apiserver');
    await until('the API server ready (/readyz)', async () => (await call('GET', '/readyz')).status === 200);
    // kubeadm's EnsureAdminClusterRoleBinding, which kubeadm init runs only with the default admin.conf path.
    const binding = await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'kubeadm:cluster-admins' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'kubeadm:cluster-admins' }],
    });
    if (binding.status !== 201) throw new Error(`kubeadm:cluster-admins: HTTP ${binding.status}`);
    start('kube-controller-manager');
    await until(
      'the controller manager leading (its lease) and the default ServiceAccount made',
      async () =>
        (await call('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager'))
          .status === 200 && (await call('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200,
    );
  } catch (error) {
    const logs = running.map((r) => `--- ${r.name}\n${readFileSync(r.log, 'utf8').slice(-2000)}`).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }

  const etcdPki = join(k, 'etcd');
  return {
    dir,
    url,
    ca,
    caKeyPath: join(k, 'ca.key'),
    caCertPath: join(k, 'ca.crt'),
    kubeconfig: { superAdmin, admin },
    kubeadmConfig,
    egress: proxy,
    call,
    callAs: (token, method, path, body, contentType) => send({ token }, method, path, body, contentType),
    apply: async (object, dryRun) => {
      const query = `fieldManager=kubemix&force=true&fieldValidation=Strict${dryRun ? '&dryRun=All' : ''}`;
      return call('PATCH', `${await pathOf(object)}?${query}`, object, 'application/apply-patch+yaml');
    },
    pathOf,
    kubeadm: (args) =>
      runBuilt({ name: 'kubeadm', release: '1.36' }, [...args, '--kubeconfig', superAdmin], { timeoutMs: 120_000 }),
    etcdctl: (args) =>
      runBuilt(
        { name: 'etcdctl' },
        [
          `--endpoints=https://127.0.0.1:${etcdClient}`,
          `--cacert=${join(etcdPki, 'ca.crt')}`,
          `--cert=${join(k, 'apiserver-etcd-client.crt')}`,
          `--key=${join(k, 'apiserver-etcd-client.key')}`,
          ...args,
        ],
        { timeoutMs: 60_000 },
      ),
    until,
    stop,
  };
}
