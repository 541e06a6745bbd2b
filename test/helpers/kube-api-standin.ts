// A stand-in for kube-apiserver, not one: HTTPS on 127.0.0.1 with a
// throwaway CA, answering the requests `kubemix verify`'s layer 2 makes, in
// the API's JSON wire format (lists with `items`, errors as Status objects
// with 404/409), bearer token checked. It keeps the objects the test sets up
// (nodes, system pods, RuntimeClasses) and plays the probe pods' lifecycle:
// a created pod is scheduled onto the node its nodeSelector names, gets an
// IP and becomes Ready (echo) or Succeeded with a log (client), where the
// log is what the test's scenario says each cell printed. There is no
// kube-apiserver on this machine.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';

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
  readonly requests: { method: string; path: string }[];
  readonly namespaces: Set<string>;
  /** Pods and Services created in namespaces, by `ns/name`. */
  readonly created: Map<string, Obj>;
  close(): Promise<void>;
}

const status = (code: number, reason: string, message: string): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

export async function startKubeApiStandin(
  tls: { cert: string; key: string },
  scenario: StandinScenario,
): Promise<KubeApiStandin> {
  const requests: KubeApiStandin['requests'] = [];
  const namespaces = new Set<string>(['default', 'kube-system', 'kube-flannel']);
  if (scenario.leftoverNamespace !== undefined) namespaces.add(scenario.leftoverNamespace);
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
  const inNs = (ns: string, kind: string): Obj[] =>
    [...created.values()].filter((o) => o['kind'] === kind && o['metadata'].namespace === ns);

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

  const createPod = (ns: string, pod: Obj): void => {
    const name: string = pod['metadata'].name;
    const node: string = pod['spec'].nodeSelector?.['kubernetes.io/hostname'] ?? '';
    pod['metadata'] = { ...pod['metadata'], namespace: ns, uid: `uid-${name}` };
    pod['status'] = { phase: 'Pending' };
    created.set(`${ns}/${name}`, pod);
    const role = pod['metadata'].labels?.['kubemix.dev/verify'];
    later(() => {
      if (!created.has(`${ns}/${name}`)) return;
      pod['spec'].nodeName = node;
      if (role === 'echo') {
        const ready = !(scenario.echoNotReady ?? []).includes(node);
        pod['status'] = ready
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
        return;
      }
      const cells = JSON.parse(pod['metadata'].annotations?.['kubemix.dev/cells'] ?? '[]') as {
        id: string;
        kind: string;
        arg: string;
      }[];
      const lines = cells.map((c) => {
        const answer = c.kind === 'http' ? answerOf(c.arg) : undefined;
        const o = scenario.cell?.(c.id, answer) ?? { ok: true, output: answer ?? '10.96.0.1' };
        return `KUBEMIX-CELL ${c.id} ${o.ok ? 'ok' : 'fail'} ${o.ok ? 1 : 61} ${o.held ?? (o.ok ? 3 : 0)} ${o.output}`;
      });
      logs.set(`${ns}/${name}`, [...lines, 'KUBEMIX-CELL-DONE', ''].join('\n'));
      pod['status'] = {
        phase: 'Succeeded',
        podIP: `10.244.${ips++}.9`,
        containerStatuses: [
          { name: 'probe', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ],
      };
    });
  };

  const handle = (
    method: string,
    path: string,
    query: URLSearchParams,
    body: Obj | undefined,
  ): [number, string, string?] => {
    const list = (kind: string, items: Obj[]): [number, string] => [
      200,
      JSON.stringify({ kind: `${kind}List`, apiVersion: 'v1', metadata: { resourceVersion: '1' }, items }),
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
    if (method === 'POST' && path === '/api/v1/namespaces') {
      const name: string = body?.['metadata']?.name;
      if (namespaces.has(name)) return [409, status(409, 'AlreadyExists', `namespaces "${name}" already exists`)];
      namespaces.add(name);
      return [201, JSON.stringify({ ...body, status: { phase: 'Active' } })];
    }
    let m = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(path);
    if (m !== null) {
      const ns = m[1]!;
      if (!namespaces.has(ns)) return [404, status(404, 'NotFound', `namespaces "${ns}" not found`)];
      if (method === 'GET')
        return [
          200,
          JSON.stringify({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: ns }, status: { phase: 'Active' } }),
        ];
      if (method === 'DELETE') {
        namespaces.delete(ns);
        for (const key of [...created.keys()]) if (key.startsWith(`${ns}/`)) created.delete(key);
        return [
          200,
          JSON.stringify({
            kind: 'Namespace',
            apiVersion: 'v1',
            metadata: { name: ns },
            status: { phase: 'Terminating' },
          }),
        ];
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
      if (!namespaces.has(ns)) return [404, status(404, 'NotFound', `namespaces "${ns}" not found`)];
      if (method === 'GET' && resource === 'pods' && name === undefined) {
        const system = scenario.systemPods.filter((p) => p['metadata'].namespace === ns);
        const [k, v] = (query.get('labelSelector') ?? '').split('=');
        const mine = inNs(ns, 'Pod').filter((p) => k === '' || k === undefined || p['metadata'].labels?.[k] === v);
        return list('Pod', [...system, ...mine]);
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
        const key = `${ns}/${resource === 'configmaps' ? 'configmap/' : ''}${body['metadata']?.name}`;
        if (created.has(key))
          return [409, status(409, 'AlreadyExists', `${resource} "${body['metadata']?.name}" already exists`)];
        if (resource === 'pods') createPod(ns, body);
        else if (resource === 'configmaps') created.set(key, { ...body, kind: 'ConfigMap' });
        else {
          body['metadata'] = { ...body['metadata'], namespace: ns };
          body['spec'] = { ...body['spec'], clusterIP: `10.96.${ips++}.1` };
          if (body['spec'].type === 'NodePort')
            body['spec'].ports = body['spec'].ports.map((p: Obj) => ({ ...p, nodePort: scenario.nodePort }));
          created.set(`${ns}/${body['metadata'].name}`, body);
        }
        return [201, JSON.stringify(body)];
      }
    }
    return [404, status(404, 'NotFound', `the server could not find the requested resource (${method} ${path})`)];
  };

  const server: Server = createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://x');
    const method = req.method ?? '';
    requests.push({ method, path: url.pathname });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      scenario.onRequest?.(method, url.pathname);
      if (req.headers.authorization !== `Bearer ${scenario.token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(status(401, 'Unauthorized', 'Unauthorized'));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
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
    close: () =>
      new Promise((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
