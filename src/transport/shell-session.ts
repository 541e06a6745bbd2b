// One framed remote shell on an open SSH connection (see framing.ts). A
// session runs one command at a time; the SSH transport keeps a small pool.
import { randomBytes } from 'node:crypto';
import type { Client, ClientChannel } from 'ssh2';
import type { Shell } from '../model/types.js';
import { FrameReader, READY, driverCommand, frameHeader, type FrameEnd } from './framing.js';
import { frameShCommand } from './sh-driver.js';
import { TailBuffer, type ExecRequest, type ExecResult } from './types.js';
import { TransportError } from './errors.js';

interface Pending {
  readonly id: number;
  readonly request: ExecRequest;
  readonly stdout: TailBuffer;
  readonly stderr: TailBuffer;
  readonly started: number;
  readonly ends: FrameEnd[];
  readonly resolve: (result: SessionResult) => void;
  readonly reject: (error: Error) => void;
}

/** Extra time past a command's own timeout before the client gives up on the connection. */
const CLIENT_GRACE_MS = 15_000;
const DEFAULT_TIMEOUT_MS = 3_600_000;

/** A command's result and which of its scripts gave the exit code (2: a failed check's apply). */
export interface SessionResult extends ExecResult {
  readonly part: number;
}

/** The driver exited before saying it was ready: no bash on the host is named as such. */
function notStarted(host: string, said: string): TransportError {
  if (/bash\b.*not found|bash: No such file/.test(said))
    return new TransportError(
      host,
      `the host has no bash: kubemix's session driver runs in bash (install it: apt-get/dnf install bash)`,
      false,
    );
  return new TransportError(host, `the remote shell exited before starting: ${said.slice(0, 200)}`, true);
}

export class ShellSession {
  private pending: Pending | undefined;
  private nextId = 1;
  private closed = false;
  private failure: Error | undefined;

  private constructor(
    private readonly host: string,
    private readonly channel: ClientChannel,
    private readonly shell: Shell,
  ) {}

  get busy(): boolean {
    return this.pending !== undefined;
  }

  get usable(): boolean {
    return !this.closed;
  }

  static open(host: string, client: Client, shell: Shell): Promise<ShellSession> {
    const marker = `KM${randomBytes(12).toString('hex')}`;
    return new Promise((resolve, reject) => {
      client.exec(driverCommand(shell, marker), (error, channel) => {
        if (error) return reject(new TransportError(host, `cannot open a session: ${error.message}`, true, error));
        const session = new ShellSession(host, channel, shell);
        session.attach(marker, resolve, reject);
      });
    });
  }

  private attach(marker: string, ready: (s: ShellSession) => void, fail: (e: Error) => void): void {
    let started = false;
    let head: Buffer = Buffer.alloc(0);
    const out = new FrameReader(
      marker,
      (c) => this.data('stdout', c),
      (e) => this.end(e),
    );
    const err = new FrameReader(
      marker,
      (c) => this.data('stderr', c),
      (e) => this.end(e),
    );
    this.channel.on('data', (chunk: Buffer) => {
      if (started) return out.push(chunk);
      head = Buffer.concat([head, chunk]);
      const eol = head.indexOf(10);
      if (eol < 0) return;
      if (!head.subarray(0, eol).toString().startsWith(READY)) {
        return fail(
          new TransportError(this.host, `the remote shell did not start: ${head.toString().slice(0, 200)}`, false),
        );
      }
      started = true;
      ready(this);
      if (head.length > eol + 1) out.push(head.subarray(eol + 1));
    });
    let early = '';
    this.channel.stderr.on('data', (chunk: Buffer) => (started ? err.push(chunk) : (early += chunk.toString())));
    this.channel.on('close', () => {
      this.closed = true;
      const error = this.failure ?? new TransportError(this.host, 'the remote shell session closed', true);
      if (!started) fail(notStarted(this.host, `${head.toString()}${early}`));
      this.pending?.reject(error);
      this.pending = undefined;
    });
  }

  /**
   * Runs `request`; with `check` (sh only), runs the check first and
   * `request` only when the check exits neither 0 nor timed out, each under
   * its own time limit, in one framed command. Output goes to `request`'s callbacks.
   */
  run(request: ExecRequest, check?: ExecRequest): Promise<SessionResult> {
    if (this.closed) return Promise.reject(new TransportError(this.host, 'session closed', true));
    if (this.pending) return Promise.reject(new Error('session busy'));
    if (check !== undefined && this.shell !== 'sh') return Promise.reject(new Error('a check folds into sh only'));
    const id = this.nextId++;
    const timeoutMs = (request.timeoutMs ?? DEFAULT_TIMEOUT_MS) + (check ? (check.timeoutMs ?? DEFAULT_TIMEOUT_MS) : 0);
    const result = new Promise<SessionResult>((resolve, reject) => {
      this.pending = {
        id,
        request,
        stdout: new TailBuffer(),
        stderr: new TailBuffer(),
        started: Date.now(),
        ends: [],
        resolve,
        reject,
      };
    });
    const timer = setTimeout(
      () =>
        this.destroy(
          new TransportError(
            this.host,
            `no answer ${Math.round(timeoutMs / 1000)} s + grace after starting a command: connection presumed lost`,
            true,
          ),
        ),
      timeoutMs + CLIENT_GRACE_MS,
    );
    this.channel.write(this.frame(id, request, check));
    return result.finally(() => clearTimeout(timer));
  }

  private frame(id: number, request: ExecRequest, check: ExecRequest | undefined): Buffer {
    const stdin = request.stdin ?? Buffer.alloc(0);
    const part = (r: ExecRequest) => ({ script: Buffer.from(r.script), timeoutMs: r.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    if (this.shell === 'sh')
      return frameShCommand(id, check ? [part(check), part(request)] : [part(request)], stdin, request.privilege);
    const script = Buffer.from(request.script);
    const seconds = (request.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000;
    return Buffer.concat([frameHeader(id, script, stdin, request.privilege, seconds), script, stdin]);
  }

  private data(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const p = this.pending;
    if (!p) return;
    p[stream].push(chunk);
    (stream === 'stdout' ? p.request.onStdout : p.request.onStderr)?.(chunk);
  }

  private end(frame: FrameEnd): void {
    const p = this.pending;
    if (!p || frame.id !== p.id) return;
    p.ends.push(frame);
    if (p.ends.length < 2) return;
    this.pending = undefined;
    const code = p.ends[0]?.code ?? 255;
    p.resolve({
      code,
      part: p.ends[0]?.part ?? 1,
      timedOut: code === 124,
      stdout: p.stdout.toString(),
      stderr: p.stderr.toString(),
      durationMs: Date.now() - p.started,
      ...(p.ends[0]?.hostMs === undefined ? {} : { hostMs: p.ends[0].hostMs }),
    });
  }

  /** Closes the session; a command in flight fails with `error`. */
  destroy(error?: Error): void {
    if (error) this.failure = error;
    if (this.closed) return;
    this.channel.end();
    this.channel.destroy();
  }
}
