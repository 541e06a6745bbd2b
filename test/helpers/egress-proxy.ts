// The test control plane's way out: kube-apiserver's egress selector
// ("cluster" and "controlplane": webhooks, aggregated APIs, kubelets) sends
// every such connection as HTTP CONNECT over this unix socket, as it would to
// konnectivity. Only routes a test adds are connected, each to a loopback
// port (a Service's ClusterIP:port → the server a test runs, standing in for
// kube-proxy and the pod network); everything else gets 502. So the API
// server never dials an address outside this machine, whatever a manifest
// points it at.
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';

export interface EgressProxy {
  readonly socket: string;
  /** CONNECT `target` (host:port as the API server asks) → 127.0.0.1:`port`. */
  route(target: string, port: number): void;
  unroute(target: string): void;
  /** Every CONNECT asked, in order, with whether it was routed. */
  readonly asked: readonly { readonly target: string; readonly routed: boolean }[];
  close(): Promise<void>;
}

export async function startEgressProxy(socket: string): Promise<EgressProxy> {
  const routes = new Map<string, number>();
  const asked: { target: string; routed: boolean }[] = [];
  const tunnels = new Set<{ destroy(): void }>();
  const server: Server = createServer((_, res) => {
    res.statusCode = 405;
    res.end();
  });
  server.on('connect', (req, client, head) => {
    const target = req.url ?? '';
    const port = routes.get(target);
    asked.push({ target, routed: port !== undefined });
    if (port === undefined) {
      client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    tunnels.add(client);
    client.on('close', () => tunnels.delete(client));
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n'));
    client.on('error', drop);
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  return {
    socket,
    route: (target, port) => void routes.set(target, port),
    unroute: (target) => void routes.delete(target),
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of tunnels) t.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
