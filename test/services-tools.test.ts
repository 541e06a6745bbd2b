// The services node's files, checked by the tools that own each format:
// haproxy -c, named-checkconf -z (chrooted to the node's tree),
// named-checkzone per zone, dnsmasq --test.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NAMED_CONF, zoneFile } from '../src/render/services/bind.js';
import { DNSMASQ_CONFIG } from '../src/render/services/dnsmasq.js';
import { servicesFacts } from '../src/render/services/facts.js';
import { HAPROXY_CONFIG } from '../src/render/services/haproxy.js';
import { SHAPES, modelFor, planFor, scratch, writeNodeTree } from './helpers/shapes.js';

function run(cmd: string, args: readonly string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
}

for (const shape of SHAPES) {
  describe(`services node of ${shape}`, () => {
    const model = modelFor(shape);
    const facts = servicesFacts(model);
    const { files } = planFor(shape);
    assert.ok(facts !== undefined);
    const tmp = scratch('services');
    after(() => tmp.remove());
    const root = join(tmp.dir, 'root');
    writeNodeTree(root, files, facts.node.name);
    // The bind9 package creates named's working directory; the chroot needs it too.
    mkdirSync(join(root, 'var/cache/bind'), { recursive: true });

    it('haproxy -c accepts haproxy.cfg', () => {
      assert.match(run('haproxy', ['-c', '-f', join(root, HAPROXY_CONFIG)]), /Configuration file is valid/);
    });

    it('named-checkconf -z accepts named.conf and loads every zone (chrooted to the node tree)', () => {
      // chroot needs root; elsewhere a user namespace maps us to root.
      const args = ['-z', '-t', root, NAMED_CONF];
      const out =
        process.getuid?.() === 0 ? run('named-checkconf', args) : run('unshare', ['-r', 'named-checkconf', ...args]);
      assert.match(out, new RegExp(`zone ${facts.zone}/IN: loaded serial`));
      assert.match(out, new RegExp(`zone ${facts.reverseZone}/IN: loaded serial`));
    });

    for (const zone of [facts.zone, facts.reverseZone]) {
      it(`named-checkzone accepts ${zone}`, () => {
        assert.match(run('named-checkzone', ['-k', 'fail', '-n', 'fail', zone, join(root, zoneFile(zone))]), /OK/);
      });
    }

    // VMs the driver creates get their leases from its network (libvirt's dnsmasq): no second DHCP server.
    it('no DHCP config on the services node: the libvirt network answers DHCP', () => {
      assert.equal(facts.toggles.dhcp, false);
      assert.ok(!files.some((f) => f.node === facts.node.name && f.remotePath === DNSMASQ_CONFIG));
    });

    it(
      'dnsmasq --test accepts the DHCP config',
      { skip: !facts.toggles.dhcp && 'no DHCP on the services node' },
      () => {
        const r = spawnSync('dnsmasq', ['--test', `--conf-file=${join(root, DNSMASQ_CONFIG)}`], {
          encoding: 'utf8',
          timeout: 20_000,
        });
        assert.equal(r.status, 0, r.stderr);
        assert.match(r.stderr, /syntax check OK/);
      },
    );
  });
}
