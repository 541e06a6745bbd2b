import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { SshTransport, DEFAULT_SSH_OPTIONS } from '../src/transport/ssh.js';
import { HostKeyError } from '../src/transport/errors.js';
import { ShellSession } from '../src/transport/shell-session.js';
import { SH_DRIVER, frameShCommand } from '../src/transport/sh-driver.js';
import type { HostConnection } from '../src/model/types.js';
import { ORIGINALS_DIR } from '../src/util/originals.js';

const skip = harnessAvailable();

describe('ssh transport on real sshd test hosts', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  let kh: string;
  const open: SshTransport[] = [];

  async function transport(conn: HostConnection, file = kh, trustNewHosts = false): Promise<SshTransport> {
    const t = new SshTransport(conn, {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts: await new KnownHostsFile(file).load(),
      trustNewHosts,
      maxSessions: 4,
    });
    open.push(t);
    return t;
  }

  before(async () => {
    net = await TestNet.create(2);
    kh = join(net.root, 'known_hosts');
    writeFileSync(kh, `${net.hosts.map((h) => net.knownHostsLine(h)).join('\n')}\n`);
  });
  after(async () => {
    await Promise.all(open.map((t) => t.close()));
    await net?.cleanup();
  });

  it('runs scripts with exit codes, streamed output and stdin', async () => {
    const h = net.hosts[0]!;
    const t = await transport(net.connection(h));
    const chunks: string[] = [];
    const r = await t.exec({
      shell: 'sh',
      privilege: 'root',
      script: 'echo out; echo err >&2; printf tail; exit 7',
      onStdout: (c) => chunks.push(c.toString()),
    });
    assert.equal(r.code, 7);
    assert.equal(r.stdout, 'out\ntail');
    assert.equal(r.stderr, 'err\n');
    assert.equal(chunks.join(''), 'out\ntail');
    const s = await t.exec({ shell: 'sh', privilege: 'user', script: 'cat; echo', stdin: Buffer.from('from stdin') });
    assert.equal(s.stdout, 'from stdin\n');
    const many = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.exec({ shell: 'sh', privilege: 'root', script: `echo ${i}` })),
    );
    assert.deepEqual(
      many.map((m) => m.stdout),
      Array.from({ length: 10 }, (_, i) => `${i}\n`),
    );
  });

  it('keeps scripts in a private folder in RAM (/dev/shm), stdin in TMPDIR, and removes both when the session ends', async () => {
    const h = net.hosts[0]!;
    const t = await transport(net.connection(h));
    // A script runs as `sh <file>`: $0 is where the driver wrote it; stdin's file is the apply's own stdin.
    const r = await t.exec({
      shell: 'sh',
      privilege: 'root',
      script: 'echo "$0"; readlink /proc/$$/fd/0',
      stdin: Buffer.from('x'),
    });
    const [script, stdin] = r.stdout.trim().split('\n');
    assert.match(script ?? '', /^\/dev\/shm\/kubemix\.[A-Za-z0-9]{8}\/s$/);
    assert.match(stdin ?? '', /^\/tmp\/kubemix\.[A-Za-z0-9]{8}\/i$/);
    const dirs = [script, stdin].map((p) => (p ?? '').replace(/\/[^/]+$/, ''));
    for (const d of dirs) assert.equal(statSync(d).mode & 0o777, 0o700, `${d} is the session's own`);
    await t.close();
    // The driver removes them on its way out, after the connection closed: give it a moment.
    const gone = (d: string): boolean => !existsSync(d);
    for (let i = 0; i < 50 && !dirs.every(gone); i++) await new Promise((r) => setTimeout(r, 100));
    for (const d of dirs) assert.ok(gone(d), `${d} removed`);
  });

  it('without a writable /dev/shm the session keeps everything in TMPDIR', () => {
    // The driver itself, run with a read-only tmpfs over /dev/shm in a private mount namespace.
    const out = execFileSync(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount -t tmpfs -o ro tmpfs /dev/shm && exec bash --norc -c "$1" kubemix M',
        'sh',
        SH_DRIVER,
      ],
      { input: frameShCommand(1, [{ script: Buffer.from('echo "$0"\n'), timeoutMs: 5000 }], Buffer.alloc(0), 'root') },
    ).toString();
    assert.match(out, /^KUBEMIX-READY \/tmp\/kubemix\.[A-Za-z0-9]{8}\n\/tmp\/kubemix\.[A-Za-z0-9]{8}\/s\n/);
  });

  it('keeps the session while sudo starts its watchdog (kill -0 refused, the process there)', () => {
    // bash reads BASH_ENV before the driver's own text: this kill answers `kill -0` as it does for a
    // non-root user while sudo runs with every uid root (EPERM), and passes every other signal on.
    const env = join(net.root, 'eperm.bash');
    writeFileSync(env, 'kill() { if [ "$1" = -0 ]; then return 1; fi; builtin kill "$@"; }\n');
    const out = execFileSync('bash', ['--norc', '-c', SH_DRIVER, 'kubemix', 'M'], {
      input: frameShCommand(1, [{ script: Buffer.from('echo ran\n'), timeoutMs: 5000 }], Buffer.alloc(0), 'user'),
      env: { ...process.env, BASH_ENV: env },
    }).toString();
    assert.match(out, /\nran\n\nM 1 0 1 /);
  });

  it('converge: check and apply in one framed command; set -e holds in the check', async () => {
    const t = await transport(net.connection(net.hosts[0]!));
    let commands = 0;
    const run = ShellSession.prototype.run;
    ShellSession.prototype.run = function (...args) {
      commands++;
      return run.apply(this, args);
    };
    const sh = (script: string) => ({ shell: 'sh', privilege: 'root', script, timeoutMs: 20_000 }) as const;
    const dir = join(net.hosts[0]!.dir, 'converge');
    const streamed: string[] = [];
    const apply = {
      ...sh(`mkdir -p ${dir}; echo applied; echo warn >&2; exit 3`),
      onStderr: (c: Buffer) => void streamed.push(c.toString()),
    };
    const failed = await t.converge(sh(`echo checking; test -d ${dir}`), apply);
    assert.equal(failed.checkPassed, false);
    assert.equal(failed.code, 3, "apply's exit code");
    assert.equal(failed.stdout, 'checking\napplied\n');
    assert.equal(failed.stderr, 'warn\n');
    const passed = await t.converge(sh(`echo checking >&2; test -d ${dir}`), apply);
    assert.equal(passed.checkPassed, true);
    assert.equal(passed.code, 0);
    assert.equal(passed.stderr, 'checking\n', "the check's output, nothing else");
    assert.equal(streamed.join(''), 'warn\nchecking\n', 'and streamed');
    const early = await t.converge(sh('exit 0; false'), sh('exit 9'));
    assert.equal(early.checkPassed, true, "the check's exit ends only the check");
    const strict = await t.converge(sh('set -e; false; true'), sh('echo ran'));
    assert.equal(strict.checkPassed, false, 'set -e stops the check at its first failure (not an if condition)');
    assert.equal(strict.stdout, 'ran\n');
    ShellSession.prototype.run = run;
    assert.equal(commands, 4, 'one framed command per converge');
  });

  it("reports the scripts' own time on the host, the check's and the apply's together (bash 5's clock)", async () => {
    const t = await transport(net.connection(net.hosts[0]!));
    const sh = (script: string) => ({ shell: 'sh', privilege: 'root', script, timeoutMs: 20_000 }) as const;
    const one = await t.exec(sh('sleep 0.4'));
    assert.ok(one.hostMs !== undefined && one.hostMs >= 400 && one.hostMs <= one.durationMs, JSON.stringify(one));
    const both = await t.converge(sh('sleep 0.3; exit 1'), sh('sleep 0.3'));
    assert.ok(both.hostMs !== undefined && both.hostMs >= 600 && both.hostMs <= both.durationMs, JSON.stringify(both));
    const quick = await t.exec(sh('true'));
    assert.ok(quick.hostMs !== undefined && quick.hostMs < 300, JSON.stringify(quick));
  });

  it('converge: the check and the apply each get their own timeout on the host', async () => {
    const t = await transport(net.connection(net.hosts[0]!));
    const sh = (script: string) => ({ shell: 'sh', privilege: 'root', script, timeoutMs: 2000 }) as const;
    const apply = await t.converge(sh('sleep 0.2; exit 1'), sh('sleep 2.8; echo finished'));
    assert.deepEqual([apply.timedOut, apply.timedOutPart, apply.stdout], [true, 'apply', '']);
    const check = await t.converge(sh('sleep 2.8'), sh('echo applied'));
    assert.deepEqual([check.timedOut, check.timedOutPart, check.checkPassed, check.stdout], [true, 'check', false, '']);
    assert.equal((await t.exec(sh('echo still'))).stdout, 'still\n', 'the session survives both');
  });

  it('uploads with mode and kills commands that time out', async () => {
    const h = net.hosts[0]!;
    const t = await transport(net.connection(h));
    const path = join(h.dir, 'sub', 'file.txt');
    await t.upload({
      shell: 'sh',
      privilege: 'root',
      remotePath: path,
      content: Buffer.from('hello\n'),
      mode: '0640',
      owner: '',
    });
    assert.equal(readFileSync(path, 'utf8'), 'hello\n');
    assert.equal(statSync(path).mode & 0o777, 0o640);
    // As root, the host recorded that kubemix created the file (for `down`), in its own /var/lib/kubemix.
    const records = net.privateDir(h, ORIGINALS_DIR);
    assert.ok(existsSync(join(records, 'created', path)), 'created record');
    assert.equal(statSync(records).mode & 0o777, 0o700);
    const r = await t.exec({ shell: 'sh', privilege: 'root', script: 'sleep 30', timeoutMs: 1000 });
    assert.equal(r.code, 124);
    assert.equal(r.timedOut, true);
    assert.equal((await t.exec({ shell: 'sh', privilege: 'root', script: 'echo still' })).stdout, 'still\n');
  });

  it('refuses an unknown host key unless --trust-new-hosts, then records it', async () => {
    const h = net.hosts[1]!;
    const fresh = join(net.root, 'empty_known_hosts');
    const t = await transport(net.connection(h), fresh);
    await assert.rejects(
      t.connect(),
      (e: unknown) =>
        e instanceof HostKeyError && /first contact refused/.test(e.message) && /--trust-new-hosts/.test(e.hint ?? ''),
    );
    const pinned = await transport(net.connection(h, { provisioner: 'kubemix' }), fresh, true);
    await assert.rejects(
      pinned.connect(),
      (e: unknown) => e instanceof HostKeyError && /pinned host key is missing/.test(e.message),
    );
    const tofu = await transport(net.connection(h), fresh, true);
    await tofu.connect();
    assert.match(readFileSync(fresh, 'utf8'), new RegExp(`^${h.address.replace(/\./g, '\\.')} ssh-ed25519 `));
    const again = await transport(net.connection(h), fresh);
    await again.connect();
  });

  it('reaches a host through a bastion (ProxyJump over forwardOut)', async () => {
    const [jump, target] = [net.hosts[0]!, net.hosts[1]!];
    const conn = net.connection(target, {
      bastion: { address: jump.address, port: 22, user: 'root', identityFile: net.clientKey },
    });
    const t = await transport(conn);
    const r = await t.exec({ shell: 'sh', privilege: 'root', script: 'echo "$SSH_CONNECTION"' });
    const [from, , to] = r.stdout.split(' ');
    assert.equal(from, jump.address, 'the connection arrives from the bastion');
    assert.equal(to, target.address);
  });
});
