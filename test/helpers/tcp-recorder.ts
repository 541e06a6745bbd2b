// A loopback TCP relay that notes the first byte of every connection: 0x16
// opens a TLS handshake, a letter a plain-HTTP request. Lets a test prove a
// client never spoke HTTP in clear to a host it must only reach over TLS.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpRecorder {
  readonly host: string;
  /** First byte of each connection, in order. */
  readonly firstBytes: number[];
  close(): Promise<void>;
}

export async function startTcpRecorder(targetPort: number): Promise<TcpRecorder> {
  const firstBytes: number[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.once('data', (chunk: Buffer) => void firstBytes.push(chunk[0] ?? -1));
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    firstBytes,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
