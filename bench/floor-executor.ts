// The floor the executor bench measures kubemix against: what any executor
// must do per task on the same hosts, and nothing more. One verified SSH
// connection per host (kubemix's own connect, host keys checked), one session
// kept open on it, one round trip per task; on the host the check runs in
// its own `sh` and, when it fails, the apply in another (a task's scripts
// must not be able to end the session: an `exit` or `set -e` in them would),
// exactly the processes kubemix's driver starts. No journal, no watchdog, no
// time limit, no events, no CLI, no frames beyond one line per script.
//
// The test hosts all share one core, so whatever a task costs a host is paid
// N times on that core per round of tasks: the floor grows with N as kubemix
// does. What kubemix adds above the floor is its own overhead.
import type { Client, ClientChannel } from 'ssh2';
import type { HostConnection } from '../src/model/types.js';
import type { KnownHostsFile } from '../src/transport/known-hosts.js';
import { connectEndpoint } from '../src/transport/ssh-connect.js';
import { DEFAULT_SSH_OPTIONS } from '../src/transport/ssh.js';
import { shellQuote } from '../src/util/escape/index.js';

/** The host's loop: two lines in (check, apply), one line out with the exit status. */
const LOOP = [
  'while IFS= read -r c && IFS= read -r a; do',
  '  sh -c "$c" </dev/null; r=$?',
  '  if [ "$r" -ne 0 ]; then sh -c "$a" </dev/null; r=$?; fi',
  '  printf \'__floor %s\\n\' "$r"',
  'done',
].join('\n');

export class FloorHost {
  private buffered = '';
  private waiting: ((code: number) => void)[] = [];

  private constructor(
    private readonly client: Client,
    private readonly channel: ClientChannel,
  ) {
    channel.on('data', (chunk: Buffer) => this.read(chunk.toString('utf8')));
  }

  static async open(conn: HostConnection, knownHosts: KnownHostsFile): Promise<FloorHost> {
    const client = await connectEndpoint(
      {
        label: conn.name,
        address: conn.address,
        port: conn.port,
        user: conn.user,
        identityFile: conn.identityFile,
        pinned: false,
      },
      { ...DEFAULT_SSH_OPTIONS, knownHosts, trustNewHosts: false },
    );
    const channel = await new Promise<ClientChannel>((resolve, reject) =>
      client.exec(`exec bash --norc -c ${shellQuote(LOOP)}`, (error, ch) => (error ? reject(error) : resolve(ch))),
    );
    return new FloorHost(client, channel);
  }

  /** Runs one task (one-line scripts), resolving with its exit status. */
  run(check: string, apply: string): Promise<number> {
    if (check.includes('\n') || apply.includes('\n')) throw new Error('the floor takes one-line scripts');
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.channel.write(`${check}\n${apply}\n`);
    });
  }

  close(): void {
    this.channel.end();
    this.client.end();
  }

  private read(text: string): void {
    this.buffered += text;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const m = /^__floor (\d+)$/.exec(line);
      if (m !== null) this.waiting.shift()?.(Number(m[1]));
    }
  }
}
