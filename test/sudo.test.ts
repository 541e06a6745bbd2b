// A non-root SSH user: root tasks run through `sudo -n`, user tasks as the
// user, secrets still only on stdin. The user exists only inside the test
// host's private /etc (test/harness/private-etc.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan } from './harness/plan-builder.js';
import { newStateDir, run, writeKnownHosts } from './harness/fixture.js';
import { KnownHostsFile } from '../src/transport/known-hosts.js';
import { DEFAULT_SSH_OPTIONS, SshTransport } from '../src/transport/ssh.js';

const skip = harnessAvailable() ?? (existsSync('/usr/bin/sudo') ? undefined : 'sudo is not installed');
const USER = 'kmsudo';

describe('non-root SSH user with sudo', { skip, timeout: 60_000 }, () => {
  let net: TestNet;
  before(async () => {
    net = await TestNet.create(1, { sudoUser: USER });
  });
  after(async () => net?.cleanup());

  it('root tasks run as root through sudo, user tasks as the user', async () => {
    const h = net.hosts[0]!;
    const built = buildPlan(
      [net.connection(h, { user: USER })],
      [
        {
          host: h.name,
          name: 'as-root',
          check: null,
          apply: `id -u > ${h.dir}/root-uid; cat > ${h.dir}/from-secret <<'EOF'\n{{secret:sudo-password}}\nEOF`,
          secrets: ['sudo-password'],
        },
        {
          host: h.name,
          name: 'as-user',
          check: null,
          privilege: 'user',
          apply: 'echo "uid=$(id -u) user=$(id -un)"',
          after: ['task-prepare-cluster/host-1/as-root'],
        },
      ],
    );
    const outcome = await run(built, newStateDir(net), writeKnownHosts(net));
    assert.equal(outcome.error, undefined, `${String(outcome.error)}\n${outcome.events.serialise()}`);
    assert.equal(readFileSync(join(h.dir, 'root-uid'), 'utf8').trim(), '0');
    assert.match(
      readFileSync(join(h.dir, 'from-secret'), 'utf8'),
      /^[A-Za-z0-9]{32}\n$/,
      'the secret reached the root task through stdin',
    );
    const lines = outcome.events
      .ofType('task:output')
      .filter((e) => e.id.endsWith('/as-user'))
      .map((e) => e.line);
    assert.ok(
      lines.some((l) => l.startsWith('uid=64') && l.endsWith(`user=${USER}`)),
      lines.join('\n'),
    );
  });

  it("a root command over its limit is killed with its group: the session's watchdog runs as root", async () => {
    const h = net.hosts[0]!;
    const t = new SshTransport(net.connection(h, { user: USER }), {
      ...DEFAULT_SSH_OPTIONS,
      knownHosts: await new KnownHostsFile(writeKnownHosts(net)).load(),
      trustNewHosts: false,
      maxSessions: 1,
    });
    try {
      const script = `sleep 300 & echo $! > ${h.dir}/root-bg.pid; id -u > ${h.dir}/root-bg.uid; sleep 300`;
      const r = await t.exec({ shell: 'sh', privilege: 'root', script, timeoutMs: 1000 });
      assert.deepEqual([r.code, r.timedOut], [124, true]);
      assert.equal(readFileSync(join(h.dir, 'root-bg.uid'), 'utf8').trim(), '0');
      const pid = Number(readFileSync(join(h.dir, 'root-bg.pid'), 'utf8'));
      for (let i = 0; i < 20 && running(pid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(!running(pid), `the root command's background child ${pid} still runs`);
      const next = await t.exec({ shell: 'sh', privilege: 'user', script: 'id -un', timeoutMs: 5000 });
      assert.equal(next.stdout, `${USER}\n`, 'the session runs the next command');
    } finally {
      await t.close();
    }
  });
});

/** Whether `pid` runs (a zombie waiting for its reaper does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
