// A stand-in for kube-apiserver, not one: HTTPS on 127.0.0.1 with a
// throwaway CA, answering the requests `kubemix verify`'s layer 2 makes, in
// the API's JSON wire format: lists with `items` and
// metadata.resourceVersion, watches streaming ADDED / MODIFIED / DELETED /
// BOOKMARK / ERROR events (kube-standin-watch.ts), errors as Status objects
// (401, 403, 404, 409 AlreadyExists and Conflict, 410, 429 with
// Retry-After), bearer token checked. It keeps the objects the test sets up
// (nodes, system pods, RuntimeClasses) and plays the probe pods' lifecycle:
// a created pod is scheduled onto the node its nodeSelector names, gets an
// IP and becomes Ready (echo) or Succeeded with a log (client), where the
// log is what the test's scenario says each cell printed. Namespaces are
// Terminating for a while after DELETE, as the namespace controller keeps
// them until their content is gone. There is no kube-apiserver here.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { matcher, statusText as status, WatchStore, type WatchOptions } from './kube-standin-watch.js';

type Obj = Record<string, any>;

export interface CellOutcome {
  readonly ok: boolean;
  readonly output: string;
  readonly held?: number;
}

export interface StandinScenario {
  readonly token: string;
  readonly gitVersion: string;
  readonly nodes: Obj[];
  /** Pods in kube-system, kube-flannel, … (each with metadata.namespace). */
  readonly systemPods: Obj[];
  readonly runtimeClasses: string[];
  /** An existing probe namespace (a crashed run's leftover). */
  readonly leftoverNamespace?: string;
  /** The leftover is already Terminating (the crashed run had deleted it). */
  readonly leftoverTerminating?: boolean;
  /** Namespaces being deleted never go (a finalizer that is never removed). */
  readonly stuckNamespace?: boolean;
  /** How long a created pod takes to be scheduled and run (default 20 ms). */
  readonly podStartMs?: number;
  /** How long a deleted namespace stays Terminating (default 30 ms). */
  readonly terminateMs?: number;
  /** Set on every namespace created, as a mutating policy or the cluster's defaults would (Pod Security level). */
  readonly forcePodSecurity?: string;
  /** A pod the cluster's policy refuses (403 with this message). */
  readonly forbidPod?: (pod: Obj) => string | undefined;
  /** A Retry-After value (seconds) to answer this request with 429 TooManyRequests instead. */
  readonly throttle?: (method: string, path: string) => string | undefined;
  readonly watch?: WatchOptions;
  /** The node port the NodePort Service gets (a loopback server the test runs). */
  readonly nodePort: number;
  /** Echo pods on these nodes never become Ready (e.g. an image that does not match the build). */
  readonly echoNotReady?: readonly string[];
  /** A cell's outcome; default: it reached what it aimed at. `answer` is the echo pod behind the address. */
  readonly cell?: (id: string, answer: string | undefined) => CellOutcome | undefined;
  /** Deployments whose pod never becomes Ready. */
  readonly deploymentsNotReady?: readonly string[];
  /** Called for each request, after it is recorded. */
  readonly onRequest?: (method: string, path: string) => void;
}

export interface KubeApiStandin {
  readonly url: string;
  readonly requests: { method: string; path: string; query: string }[];
  readonly namespaces: Map<string, Obj>;
  /** Pods and Services created in namespaces, by `ns/name` (until their namespace is gone). */
  readonly created: Map<string, Obj>;
  /** Every POST's body as sent, by path. */
  readonly posted: { path: string; body: Obj }[];
  /** Puts a namespace there as another client would: Active, or Active and then deleted (Terminating). */
  seedNamespace(name: string, state: 'active' | 'terminating'): void;
  close(): Promise<void>;
}

const ENFORCE = 'pod-security.kubernetes.io/enforce';

export async function startKubeApiStandin(
  tls: { cert: string; key: string },
  scenario: StandinScenario,
): Promise<KubeApiStandin> {
  const requests: KubeApiStandin['requests'] = [];
  const posted: KubeApiStandin['posted'] = [];
  const store = new WatchStore(scenario.watch);
  const namespaces = new Map<string, Obj>();
  const created = new Map<string, Obj>();
  const logs = new Map<string, string>();
  const timers = new Set<NodeJS.Timeout>();
  let ips = 10;
  const later = (fn: () => void, ms = 20): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const addNamespace = (name: string, labels: Obj = {}): Obj => {
    const ns = {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name, labels },
      spec: { finalizers: ['kubernetes'] },
    };
    Object.assign(ns, { status: { phase: 'Active' } });
    namespaces.set(name, ns);
    store.emit('ADDED', 'Namespace', ns);
    return ns;
  };
  for (const n of ['default', 'kube-system', 'kube-flannel']) addNamespace(n);
  const inNs = (ns: string, kind: string): Obj[] =>
    [...created.values()].filter((o) => o['kind'] === kind && o['metadata'].namespace === ns);

  /** DELETE: Terminating now, gone (with its content) after terminateMs unless stuck. */
  const terminate = (name: string): Obj => {
    const ns = namespaces.get(name)!;
    ns['metadata'].deletionTimestamp = '2026-01-01T00:00:00Z';
    ns['status'] = { phase: 'Terminating' };
    if (scenario.stuckNamespace === true)
      ns['status'].conditions = [
        {
          type: 'NamespaceFinalizersRemaining',
          status: 'True',
          reason: 'SomeFinalizersRemain',
          message: 'Some content in the namespace has finalizers remaining: example.com/never in 1 resource instances',
        },
      ];
    store.emit('MODIFIED', 'Namespace', ns);
    if (scenario.stuckNamespace !== true)
      later(() => {
        for (const [key, o] of [...created])
          if (o['metadata'].namespace === name) {
            created.delete(key);
            if (o['kind'] === 'Pod') store.emit('DELETED', 'Pod', o);
          }
        namespaces.delete(name);
        store.emit('DELETED', 'Namespace', ns);
      }, scenario.terminateMs ?? 30);
    return ns;
  };
  if (scenario.leftoverNamespace !== undefined) {
    addNamespace(scenario.leftoverNamespace);
    if (scenario.leftoverTerminating === true) terminate(scenario.leftoverNamespace);
  }

  const answerOf = (arg: string): string | undefined => {
    const host = arg.replace(/:\d+$/, '');
    const pod = [...created.values()].find((o) => o['kind'] === 'Pod' && o['status']?.podIP === host);
    if (pod !== undefined) return pod['metadata'].name;
    const svc = [...created.values()].find(
      (o) => o['kind'] === 'Service' && (o['spec'].clusterIP === host || host.startsWith(`${o['metadata'].name}.`)),
    );
    if (svc === undefined) return undefined;
    const sel: Obj = svc['spec'].selector ?? {};
    const backend = inNs(svc['metadata'].namespace, 'Pod').find(
      (p) => p['status']?.podIP !== undefined && Object.entries(sel).every(([k, v]) => p['metadata'].labels?.[k] === v),
    );
    return backend?.['metadata'].name;
  };

  const echoStatus = (ready: boolean): Obj =>
    ready
      ? {
          phase: 'Running',
          podIP: `10.244.${ips++}.5`,
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ name: 'echo', ready: true, state: { running: {} } }],
        }
      : {
          phase: 'Pending',
          conditions: [{ type: 'Ready', status: 'False' }],
          containerStatuses: [
            {
              name: 'echo',
              ready: false,
              state: { waiting: { reason: 'ErrImagePull', message: 'no matching manifest' } },
            },
          ],
        };

  const clientLog = (pod: Obj): string => {
    const cells = JSON.parse(pod['metadata'].annotations?.['kubemix.dev/cells'] ?? '[]') as {
      id: string;
      kind: string;
      arg: string;
    }[];
    const lines = cells.map((c) => {
      const answer = c.kind === 'http' ? answerOf(c.arg) : undefined;
      const fallback = c.kind === 'tcp' ? `connected to ${c.arg}` : (answer ?? '10.96.0.1');
      const o = scenario.cell?.(c.id, answer) ?? { ok: true, output: fallback };
      return `KUBEMIX-CELL ${c.id} ${o.ok ? 'ok' : 'fail'} ${o.ok ? 1 : 61} ${o.held ?? (o.ok ? 3 : 0)} ${o.output}`;
    });
    return [...lines, 'KUBEMIX-CELL-DONE', ''].join('\n');
  };

  const createPod = (ns: string, pod: Obj): void => {
    const name: string = pod['metadata'].name;
    const node: string = pod['spec'].nodeSelector?.['kubernetes.io/hostname'] ?? '';
    pod['kind'] = 'Pod';
    pod['metadata'] = { ...pod['metadata'], namespace: ns, uid: `uid-${name}` };
    pod['status'] = { phase: 'Pending' };
    created.set(`${ns}/${name}`, pod);
    store.emit('ADDED', 'Pod', pod);
    const role = pod['metadata'].labels?.['kubemix.dev/verify'];
    later(() => {
      if (created.get(`${ns}/${name}`) !== pod) return;
      pod['spec'].nodeName = node;
      if (role === 'echo') pod['status'] = echoStatus(!(scenario.echoNotReady ?? []).includes(node));
      else {
        logs.set(`${ns}/${name}`, clientLog(pod));
        pod['status'] = {
          phase: 'Succeeded',
          podIP: pod['spec'].hostNetwork === true ? '127.0.0.1' : `10.244.${ips++}.9`,
          containerStatuses: [
            { name: 'probe', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          ],
        };
      }
      store.emit('MODIFIED', 'Pod', pod);
    }, scenario.podStartMs ?? 20);
  };

  /** Why the namespace's Pod Security level or the scenario's policy refuses a pod, if it does. */
  const podRefusal = (ns: string, pod: Obj): string | undefined => {
    const name: string = pod['metadata']?.name;
    const level = namespaces.get(ns)?.['metadata'].labels?.[ENFORCE] ?? 'privileged';
    if (level !== 'privileged' && pod['spec']?.hostNetwork === true)
      return `pods "${name}" is forbidden: violates PodSecurity "${level}:latest": host namespaces (hostNetwork=true)`;
    const policy = scenario.forbidPod?.(pod);
    return policy === undefined ? undefined : `pods "${name}" is forbidden: ${policy}`;
  };

  const handle = (
    method: string,
    path: string,
    query: URLSearchParams,
    body: Obj | undefined,
  ): [number, string, string?] => {
    const list = (kind: string, items: Obj[]): [number, string] => [
      200,
      JSON.stringify({
        kind: `${kind}List`,
        apiVersion: 'v1',
        metadata: { resourceVersion: String(store.rv) },
        items,
      }),
    ];
    if (method === 'GET' && path === '/version')
      return [
        200,
        JSON.stringify({
          major: '1',
          minor: scenario.gitVersion.split('.')[1],
          gitVersion: scenario.gitVersion,
          gitCommit: '0',
          gitTreeState: 'clean',
          buildDate: '2026-01-01T00:00:00Z',
          goVersion: 'go1.25',
          compiler: 'gc',
          platform: 'linux/amd64',
        }),
      ];
    if (method === 'GET' && path === '/api/v1/nodes') return list('Node', scenario.nodes);
    if (method === 'GET' && path === '/apis/node.k8s.io/v1/runtimeclasses')
      return list(
        'RuntimeClass',
        scenario.runtimeClasses.map((n) => ({
          apiVersion: 'node.k8s.io/v1',
          kind: 'RuntimeClass',
          metadata: { name: n },
          handler: 'runhcs-wcow-process',
        })),
      );
    if (method === 'GET' && path === '/api/v1/namespaces')
      return list('Namespace', [...namespaces.values()].filter(matcher(query)));
    if (method === 'POST' && path === '/api/v1/namespaces') {
      const name: string = body?.['metadata']?.name;
      const old = namespaces.get(name);
      if (old !== undefined) {
        const being = old['metadata'].deletionTimestamp === undefined ? '' : 'object is being deleted: ';
        return [409, status(409, 'AlreadyExists', `${being}namespaces "${name}" already exists`)];
      }
      const labels = { ...body?.['metadata']?.labels };
      if (scenario.forcePodSecurity !== undefined) labels[ENFORCE] = scenario.forcePodSecurity;
      return [201, JSON.stringify(addNamespace(name, labels))];
    }
    let m = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(path);
    if (m !== null) {
      const ns = m[1]!;
      const obj = namespaces.get(ns);
      if (obj === undefined) return [404, status(404, 'NotFound', `namespaces "${ns}" not found`)];
      if (method === 'GET') return [200, JSON.stringify(obj)];
      if (method === 'DELETE') {
        if (obj['metadata'].deletionTimestamp !== undefined)
          return [
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on namespaces "${ns}": The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system.`,
            ),
          ];
        return [200, JSON.stringify(terminate(ns))];
      }
    }
    m = /^\/apis\/apps\/v1\/namespaces\/([^/]+)\/deployments$/.exec(path);
    if (m !== null && method === 'POST' && body !== undefined) {
      const ns = m[1]!;
      if (!namespaces.has(ns)) return [404, status(404, 'NotFound', `namespaces "${ns}" not found`)];
      body['metadata'] = { ...body['metadata'], namespace: ns };
      created.set(`${ns}/deployment/${body['metadata'].name}`, body);
      const template: Obj = body['spec'].template;
      const selector: Obj = template.spec.nodeSelector ?? {};
      const node = scenario.nodes.find((n) =>
        Object.entries(selector).every(([k, v]) => n['metadata'].labels?.[k] === v),
      );
      const name = `${body['metadata'].name}-7d9f-x1`;
      const ready = !(scenario.deploymentsNotReady ?? []).includes(body['metadata'].name);
      later(() => {
        created.set(`${ns}/${name}`, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: ns, labels: template.metadata.labels },
          spec: { ...template.spec, nodeName: node?.['metadata'].name },
          status: ready
            ? { phase: 'Running', podIP: `10.244.${ips++}.7`, conditions: [{ type: 'Ready', status: 'True' }] }
            : {
                phase: 'Pending',
                conditions: [{ type: 'Ready', status: 'False' }],
                containerStatuses: [{ name: 'c', ready: false, state: { waiting: { reason: 'ImagePullBackOff' } } }],
              },
        });
      });
      return [201, JSON.stringify(body)];
    }
    m = /^\/api\/v1\/namespaces\/([^/]+)\/(pods|services|configmaps)(?:\/([^/]+)(\/log)?)?$/.exec(path);
    if (m !== null) {
      const [, ns = '', resource, name, log] = m;
      const nsObj = namespaces.get(ns);
      if (nsObj === undefined) return [404, status(404, 'NotFound', `namespaces "${ns}" not found`)];
      if (method === 'GET' && resource === 'pods' && name === undefined) {
        const system = scenario.systemPods.filter((p) => p['metadata'].namespace === ns);
        return list('Pod', [...system, ...inNs(ns, 'Pod')].filter(matcher(query)));
      }
      if (method === 'GET' && resource === 'services' && name !== undefined) {
        const svc = created.get(`${ns}/${name}`);
        return svc === undefined
          ? [404, status(404, 'NotFound', `services "${name}" not found`)]
          : [200, JSON.stringify(svc)];
      }
      if (method === 'GET' && log !== undefined) {
        const text = logs.get(`${ns}/${name ?? ''}`);
        return text === undefined
          ? [404, status(404, 'NotFound', `pods "${name ?? ''}" not found`)]
          : [200, text, 'text/plain'];
      }
      if (method === 'POST' && body !== undefined) {
        const objName: string = body['metadata']?.name;
        if (nsObj['metadata'].deletionTimestamp !== undefined)
          return [
            403,
            status(
              403,
              'Forbidden',
              `${resource} "${objName}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
            ),
          ];
        const key = `${ns}/${resource === 'configmaps' ? 'configmap/' : ''}${objName}`;
        if (created.has(key)) return [409, status(409, 'AlreadyExists', `${resource} "${objName}" already exists`)];
        if (resource === 'pods') {
          const refused = podRefusal(ns, body);
          if (refused !== undefined) return [403, status(403, 'Forbidden', refused)];
          createPod(ns, body);
        } else if (resource === 'configmaps') created.set(key, { ...body, kind: 'ConfigMap' });
        else {
          body['kind'] = 'Service';
          body['metadata'] = { ...body['metadata'], namespace: ns };
          body['spec'] = { ...body['spec'], clusterIP: `10.96.${ips++}.1` };
          if (body['spec'].type === 'NodePort')
            body['spec'].ports = body['spec'].ports.map((p: Obj) => ({ ...p, nodePort: scenario.nodePort }));
          created.set(`${ns}/${objName}`, body);
        }
        return [201, JSON.stringify(body)];
      }
    }
    return [404, status(404, 'NotFound', `the server could not find the requested resource (${method} ${path})`)];
  };

  const server: Server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    const method = req.method ?? '';
    requests.push({ method, path: url.pathname, query: url.search });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      scenario.onRequest?.(method, url.pathname);
      if (req.headers.authorization !== `Bearer ${scenario.token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(status(401, 'Unauthorized', 'Unauthorized'));
        return;
      }
      const retryAfter = scenario.throttle?.(method, url.pathname);
      if (retryAfter !== undefined) {
        const body = status(429, 'TooManyRequests', 'Too many requests, please try again later.', {
          details: { retryAfterSeconds: Number(retryAfter) },
        });
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end(body);
        return;
      }
      if (method === 'GET' && url.searchParams.get('watch') === 'true') {
        const pods = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname);
        const match = matcher(url.searchParams);
        if (url.pathname === '/api/v1/namespaces') return store.serve(res, 'Namespace', url.searchParams, match);
        if (pods !== null)
          return store.serve(res, 'Pod', url.searchParams, (o) => o['metadata'].namespace === pods[1] && match(o));
      }
      const text = Buffer.concat(chunks).toString('utf8');
      if (method === 'POST' && text !== '') posted.push({ path: url.pathname, body: JSON.parse(text) as Obj });
      const [code, out, type] = handle(
        method,
        url.pathname,
        url.searchParams,
        text === '' ? undefined : (JSON.parse(text) as Obj),
      );
      res.writeHead(code, { 'content-type': type ?? 'application/json' }).end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  const port = typeof a === 'object' && a !== null ? a.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    requests,
    namespaces,
    created,
    posted,
    seedNamespace: (name, state) => {
      if (!namespaces.has(name)) addNamespace(name);
      if (state === 'terminating' && namespaces.get(name)?.['metadata'].deletionTimestamp === undefined)
        terminate(name);
    },
    close: () =>
      new Promise((r) => {
        for (const t of timers) clearTimeout(t);
        store.close();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
