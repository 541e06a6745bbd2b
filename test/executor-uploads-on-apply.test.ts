// Task.uploadsOnApply on a real sshd test host: uploads an apply consumes
// (the install media files of a Windows VM, which hold secrets) are placed,
// 0600 with their secret filled in, only when the check fails; once the
// apply has deleted them, a later run whose check passes places nothing and
// applies nothing — even without the journal (a fresh state directory). The
// same task without the flag re-uploads and re-applies: the missing file
// alone makes it run.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestNet, harnessAvailable } from './harness/netns.js';
import { buildPlan } from './harness/plan-builder.js';
import { lines, newStateDir, run, writeKnownHosts } from './harness/fixture.js';

const skip = harnessAvailable();

describe('uploads an apply consumes', { skip, timeout: 120_000 }, () => {
  let net: TestNet;
  let kh: string;
  before(async () => {
    net = await TestNet.create(1);
    kh = writeKnownHosts(net);
  });
  after(async () => net?.cleanup());

  function plan(dir: string, consumes: boolean) {
    const host = net.hosts[0] ?? assert.fail();
    const secretFile = join(dir, 'media', 'answer.txt');
    return {
      secretFile,
      built: join(dir, 'built'),
      log: join(dir, 'applies'),
      plan: buildPlan(
        net.hosts.map((h) => net.connection(h)),
        [
          {
            host: host.name,
            name: 'media',
            check: `test -f ${join(dir, 'built')}`,
            apply: `stat -c %a ${secretFile} >> ${join(dir, 'applies')}
cp ${secretFile} ${join(dir, 'built')}
rm -f ${secretFile}`,
            uploads: [`${host.name}:${secretFile}`],
            secrets: ['media-password'],
            ...(consumes ? { uploadsOnApply: true as const } : {}),
          },
        ],
        [{ node: host.name, remotePath: secretFile, content: 'password={{secret:media-password}}\n', mode: '0600' }],
      ),
    };
  }

  it('places them only when the check fails; a passing check places and applies nothing', async () => {
    const host = net.hosts[0] ?? assert.fail();
    const p = plan(join(host.dir, 'consumed'), true);
    const first = await run(p.plan, newStateDir(net), kh);
    assert.equal(first.result?.failed.length, 0, String(first.error));
    assert.deepEqual(lines(p.log), ['600'], 'placed 0600 and applied once');
    assert.match(readFileSync(p.built, 'utf8'), /^password=(?!\{\{secret:).+\n$/, 'filled in');
    assert.equal(existsSync(p.secretFile), false, 'the apply consumed it');
    // A fresh state directory: no journal says the task is done, only its check.
    const second = await run(p.plan, newStateDir(net), kh);
    assert.equal(second.result?.failed.length, 0, String(second.error));
    assert.deepEqual(lines(p.log), ['600'], 'not applied again');
    assert.equal(existsSync(p.secretFile), false, 'not placed again');
  });

  it('without the flag the missing upload alone makes the task upload and apply again', async () => {
    const host = net.hosts[0] ?? assert.fail();
    const p = plan(join(host.dir, 'plain'), false);
    await run(p.plan, newStateDir(net), kh);
    await run(p.plan, newStateDir(net), kh);
    assert.deepEqual(lines(p.log), ['600', '600']);
  });
});
