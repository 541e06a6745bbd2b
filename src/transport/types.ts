// One interface for reaching a host. The executor only talks to hosts through
// it, so tests can run the real thing against sshd test hosts.
import type { Duplex } from 'node:stream';
import type { Privilege, Shell } from '../model/types.js';

export interface ExecRequest {
  readonly shell: Shell;
  readonly privilege: Privilege;
  /** Script text, already filled with secrets: it travels on stdin, never on a command line. */
  readonly script: string;
  /** Bytes given to the script on its standard input. */
  readonly stdin?: Buffer;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly onStdout?: (chunk: Buffer) => void;
  readonly onStderr?: (chunk: Buffer) => void;
}

export interface ExecResult {
  /** Exit code; 124 when the command was killed because it timed out. */
  readonly code: number;
  readonly timedOut: boolean;
  /** Captured output, the last {@link OUTPUT_CAP} bytes of each stream. */
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /**
   * How long the script(s) ran on the host, as the host's own clock measured
   * them (the sh driver with bash 5); undefined where the driver reports none.
   * durationMs minus this is the transport's and kubemix's share.
   */
  readonly hostMs?: number;
}

export interface UploadRequest {
  readonly shell: Shell;
  readonly privilege: Privilege;
  readonly remotePath: string;
  readonly content: Buffer;
  /** Octal mode string (`0644`); ignored on Windows. */
  readonly mode: string;
  /** `user` or `user:group`; empty keeps the SSH user's. Ignored on Windows. */
  readonly owner: string;
  readonly signal?: AbortSignal;
}

export interface Transport {
  readonly host: string;
  exec(request: ExecRequest): Promise<ExecResult>;
  upload(request: UploadRequest): Promise<void>;
  /** Whether the underlying connection is up (false after a reset). */
  readonly connected: boolean;
  close(): Promise<void>;
}

export const OUTPUT_CAP = 64 * 1024;

/** Keeps the tail of a stream up to a byte cap. */
export class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly cap: number = OUTPUT_CAP) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.cap && this.chunks.length > 1) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  toString(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.cap)).toString('utf8');
  }
}

export interface ConvergeResult extends ExecResult {
  /** The check exited 0, so apply did not run (`code` is then 0). */
  readonly checkPassed: boolean;
  /** Which part ran out of its own time, when `timedOut`. */
  readonly timedOutPart?: 'check' | 'apply';
}

/** A transport the executor can (re)connect and read files through. */
export interface HostTransport extends Transport {
  connect(): Promise<void>;
  readFile(path: string, privilege: ExecRequest['privilege']): Promise<string>;
  /**
   * Runs `apply` unless `check` exits 0. Optional: the executor runs the two
   * apart on a transport without it. Output of both streams to `apply`'s callbacks.
   */
  converge?(check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult>;
  /**
   * A TCP stream to `host:port` as the host itself reaches it (SSH direct-tcpip):
   * the deployer talks to a service on the host that it has no route to
   * (the services registry behind a hypervisor). Optional.
   */
  tunnel?(host: string, port: number): Promise<Duplex>;
}
