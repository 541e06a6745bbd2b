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
});
