// The SSH transport: one connection per host for the whole run (reopened
// after a reset), a small pool of framed shell sessions on it, uploads and
// reads through those sessions. Sudo (non-interactive) is applied inside the
// session driver for `privilege: 'root'` when the SSH user is not root.
import type { Duplex } from 'node:stream';
import type { Client } from 'ssh2';
import type { HostConnection } from '../model/types.js';
import { connectEndpoint, type ConnectOptions, type Endpoint } from './ssh-connect.js';
import { ShellSession } from './shell-session.js';
import { TransportError } from './errors.js';
import { readFileScript, uploadScript } from './scripts.js';
import { ORIGINALS_DIR } from '../util/originals.js';
import { convergeApart, foldable, foldedResult } from './converge.js';
import {
  TailBuffer,
  type ConvergeResult,
  type ExecRequest,
  type ExecResult,
  type Transport,
  type UploadRequest,
} from './types.js';

export interface SshTransportOptions extends ConnectOptions {
  /** Framed sessions per host (≥ the executor's per-host concurrency). */
  readonly maxSessions: number;
}

export interface SshTimings {
  readonly keepaliveIntervalMs: number;
  readonly keepaliveCountMax: number;
  readonly readyTimeoutMs: number;
}

export const DEFAULT_SSH_OPTIONS: SshTimings = {
  keepaliveIntervalMs: 5_000,
  keepaliveCountMax: 3,
  readyTimeoutMs: 20_000,
};

export class SshTransport implements Transport {
  private client: Client | undefined;
  private bastion: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private sessions: ShellSession[] = [];
  /** Callers waiting for a session to be released (all `maxSessions` are busy or being opened). */
  private waiters: { resolve: (s: ShellSession) => void; reject: (e: unknown) => void }[] = [];
  private opening = 0;

  constructor(
    private readonly conn: HostConnection,
    private readonly options: SshTransportOptions,
  ) {}

  get host(): string {
    return this.conn.name;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Opens the connection if it is not open; host key refusals are thrown as HostKeyError. */
  async connect(): Promise<void> {
    await this.ensureClient();
  }

  /** A TCP stream from the host to `host:port` (direct-tcpip over this connection). */
  async tunnel(host: string, port: number): Promise<Duplex> {
    const client = await this.ensureClient();
    return new Promise((resolve, reject) =>
      client.forwardOut('127.0.0.1', 0, host, port, (error, stream) =>
        error
          ? reject(
              new TransportError(
                this.conn.name,
                `cannot reach ${host}:${port} from ${this.conn.name}: ${error.message}`,
                false,
                error,
              ),
            )
          : resolve(stream),
      ),
    );
  }

  private ensureClient(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<Client> {
    const target: Endpoint = {
      label: this.conn.name,
      address: this.conn.address,
      port: this.conn.port,
      user: this.conn.user,
      identityFile: this.conn.identityFile,
      pinned: this.conn.provisioner === 'kubemix',
    };
    let sock;
    const b = this.conn.bastion;
    if (b) {
      const jump = await connectEndpoint(
        {
          label: `${this.conn.name} (bastion ${b.address})`,
          address: b.address,
          port: b.port,
          user: b.user,
          identityFile: b.identityFile,
          pinned: false,
        },
        this.options,
      );
      this.bastion = jump;
      jump.on('close', () => this.dropped());
      sock = await new Promise<NonNullable<Parameters<typeof connectEndpoint>[2]>>((resolve, reject) =>
        jump.forwardOut('127.0.0.1', 0, this.conn.address, this.conn.port, (error, stream) =>
          error
            ? reject(
                new TransportError(
                  this.conn.name,
                  `bastion ${b.address} cannot reach ${this.conn.address}:${this.conn.port}: ${error.message}`,
                  true,
                  error,
                ),
              )
            : resolve(stream),
        ),
      );
    }
    const client = await connectEndpoint(target, this.options, sock);
    client.on('error', () => this.dropped());
    client.on('close', () => this.dropped());
    this.client = client;
    return client;
  }

  private dropped(): void {
    const sessions = this.sessions;
    this.sessions = [];
    for (const s of sessions) s.destroy(new TransportError(this.conn.name, 'connection lost', true));
    this.client?.end();
    this.bastion?.end();
    this.client = undefined;
    this.bastion = undefined;
  }

  private async acquire(): Promise<ShellSession> {
    this.sessions = this.sessions.filter((s) => s.usable);
    const idle = this.sessions.find((s) => !s.busy && !this.reserved.has(s));
    if (idle) {
      this.reserved.add(idle);
      return idle;
    }
    if (this.sessions.length + this.opening < this.options.maxSessions) {
      this.opening += 1;
      let session: ShellSession;
      try {
        const client = await this.ensureClient();
        session = await ShellSession.open(this.conn.name, client, this.conn.shell);
      } catch (error) {
        this.opening -= 1;
        this.failWaiters(error);
        throw error;
      }
      this.opening -= 1;
      this.sessions.push(session);
      this.reserved.add(session);
      return session;
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * A session could not be opened. Waiters are only ever served by a session
   * being released: when no session is open and no other one is being opened,
   * none will be, and they would wait forever (verify with more probes in
   * flight per node than maxSessions on an unreachable host never settled).
   */
  private failWaiters(error: unknown): void {
    this.sessions = this.sessions.filter((s) => s.usable);
    if (this.sessions.length > 0 || this.opening > 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.reject(error);
  }

  private readonly reserved = new Set<ShellSession>();

  private release(session: ShellSession): void {
    const next = this.waiters.shift();
    if (next && session.usable) return next.resolve(session);
    this.reserved.delete(session);
    if (next) this.acquire().then(next.resolve, next.reject);
  }

  async exec(request: ExecRequest): Promise<ExecResult> {
    const session = await this.acquire();
    try {
      return await session.run(request);
    } finally {
      this.release(session);
    }
  }

  /** Check and apply in one framed command (sh); apart on PowerShell or mixed privileges. */
  async converge(check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
    if (!foldable(check, apply)) return convergeApart((r) => this.exec(r), check, apply);
    const session = await this.acquire();
    try {
      return foldedResult(await session.run(apply, check));
    } finally {
      this.release(session);
    }
  }

  async upload(request: UploadRequest): Promise<void> {
    const result = await this.exec({
      shell: request.shell,
      privilege: request.privilege,
      // As root, a node records what the upload replaces, for `down` to give back (util/originals.ts).
      script: uploadScript(request.shell, request.remotePath, request.mode, request.owner, {
        originals: request.privilege === 'root' ? ORIGINALS_DIR : undefined,
      }),
      stdin: request.content,
      timeoutMs: 600_000,
    });
    if (result.code !== 0)
      throw new TransportError(
        this.conn.name,
        `upload of ${request.remotePath} failed (exit ${result.code}): ${result.stderr.trim()}`,
        false,
      );
  }

  async readFile(path: string, privilege: ExecRequest['privilege']): Promise<string> {
    const result = await this.exec({
      shell: this.conn.shell,
      privilege,
      script: readFileScript(this.conn.shell, path),
      timeoutMs: 60_000,
    });
    if (result.code !== 0)
      throw new TransportError(
        this.conn.name,
        `cannot read ${path} (exit ${result.code}): ${result.stderr.trim()}`,
        false,
      );
    return result.stdout;
  }

  /** One exec channel per command (script on stdin): the slow path, kept to measure the session's gain. */
  async execChannel(request: ExecRequest): Promise<ExecResult> {
    const client = await this.ensureClient();
    const started = Date.now();
    const command = request.privilege === 'root' && this.conn.user !== 'root' ? 'sudo -n -- sh -s' : 'sh -s';
    return new Promise((resolve, reject) => {
      client.exec(command, (error, channel) => {
        if (error) return reject(new TransportError(this.conn.name, `exec failed: ${error.message}`, true, error));
        const out = new TailBuffer();
        const err = new TailBuffer();
        let code = 255;
        channel.on('data', (c: Buffer) => out.push(c));
        channel.stderr.on('data', (c: Buffer) => err.push(c));
        channel.on('exit', (c: number | null) => (code = c ?? 255));
        channel.on('close', () =>
          resolve({
            code,
            timedOut: false,
            stdout: out.toString(),
            stderr: err.toString(),
            durationMs: Date.now() - started,
          }),
        );
        channel.end(request.script);
      });
    });
  }

  async close(): Promise<void> {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.reject(new TransportError(this.conn.name, 'the connection was closed', false));
    for (const s of this.sessions) s.destroy();
    this.sessions = [];
    this.client?.end();
    this.bastion?.end();
    this.client = undefined;
    this.bastion = undefined;
  }
}
