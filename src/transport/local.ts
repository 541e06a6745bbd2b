// The machine running kubemix, for tasks whose host is `local` (driver work
// such as libvirt). Same contract as SSH: script on stdin, never argv.
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { spawn } from 'node:child_process';
import { userInfo } from 'node:os';
import { TransportError } from './errors.js';
import { uploadScript, readFileScript } from './scripts.js';
import { convergeApart } from './converge.js';
import {
  TailBuffer,
  type ConvergeResult,
  type ExecRequest,
  type ExecResult,
  type Transport,
  type UploadRequest,
} from './types.js';

export class LocalTransport implements Transport {
  readonly host = 'local';
  readonly connected = true;

  async connect(): Promise<void> {}

  /** This machine reaches `host:port` itself. */
  tunnel(host: string, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const socket = netConnect(port, host, () => resolve(socket));
      socket.once('error', reject);
    });
  }

  exec(request: ExecRequest): Promise<ExecResult> {
    if (request.shell !== 'sh') return Promise.reject(new TransportError('local', 'local tasks run in sh only', false));
    const sudo = request.privilege === 'root' && userInfo().uid !== 0;
    const seconds = String(Math.max(1, Math.ceil((request.timeoutMs ?? 3_600_000) / 1000)));
    const [cmd, ...args] = [
      ...(sudo ? ['sudo', '-n', '--'] : []),
      'timeout',
      '-k',
      '5',
      seconds,
      'sh',
      '-c',
      'f=$(mktemp) && head -c "$0" > "$f" && sh "$f"; rc=$?; rm -f "$f"; exit $rc',
      String(Buffer.byteLength(request.script)),
    ];
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const child = spawn(cmd ?? 'timeout', args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out = new TailBuffer();
      const err = new TailBuffer();
      child.stdout.on('data', (c: Buffer) => (out.push(c), request.onStdout?.(c)));
      child.stderr.on('data', (c: Buffer) => (err.push(c), request.onStderr?.(c)));
      child.once('error', (e) => reject(new TransportError('local', e.message, false, e)));
      child.once('close', (code) =>
        resolve({
          code: code ?? 255,
          timedOut: code === 124,
          stdout: out.toString(),
          stderr: err.toString(),
          durationMs: Date.now() - started,
        }),
      );
      child.stdin.end(Buffer.concat([Buffer.from(request.script), request.stdin ?? Buffer.alloc(0)]));
    });
  }

  /** Check, then apply if it failed: two processes, each under its own timeout(1). */
  converge(check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
    return convergeApart((r) => this.exec(r), check, apply);
  }

  async upload(request: UploadRequest): Promise<void> {
    const r = await this.exec({
      shell: 'sh',
      privilege: request.privilege,
      // No record of what is replaced: this is the deployer's machine, which no `down` resets.
      script: uploadScript('sh', request.remotePath, request.mode, request.owner),
      stdin: request.content,
    });
    if (r.code !== 0)
      throw new TransportError('local', `writing ${request.remotePath} failed: ${r.stderr.trim()}`, false);
  }

  async readFile(path: string, privilege: ExecRequest['privilege']): Promise<string> {
    const r = await this.exec({ shell: 'sh', privilege, script: readFileScript('sh', path) });
    if (r.code !== 0) throw new TransportError('local', `cannot read ${path}: ${r.stderr.trim()}`, false);
    return r.stdout;
  }

  async close(): Promise<void> {}
}
