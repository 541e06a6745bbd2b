// DHCP for existing hosts: hosts that give a `mac` get a reservation of their
// node IP in the services node's dnsmasq; without any MAC nothing is deployed
// and the spec says why. The rendered config passes `dnsmasq --test`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { DNSMASQ_CONFIG } from '../src/render/services/dnsmasq.js';
import { readSpec } from '../src/spec/read.js';
import { scratch } from './helpers/shapes.js';

function specWith(macs: Record<string, string>): string {
  const host = (name: string, ip: string, roles: string[]) => ({
    name,
    address: ip,
    roles,
    os: 'debian-12',
    ...(macs[name] === undefined ? {} : { mac: macs[name] }),
  });
  return stringify({
    apiVersion: 'kubemix.dev/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'lab' },
    spec: {
      network: { nodeCidr: '198.51.100.0/24', gateway: '198.51.100.1' },
      infrastructure: {
        driver: 'existing',
        hosts: [
          host('cp1', '198.51.100.10', ['control-plane']),
          host('w1', '198.51.100.20', ['worker']),
          host('svc', '198.51.100.5', ['services']),
        ],
      },
    },
  });
}

function planOf(text: string) {
  const spec = readSpec({ kind: 'file', path: 'cluster.yaml', text });
  return { spec, assembled: assemblePlan(resolveModel(spec)) };
}

describe('DHCP reservations for existing hosts', () => {
  it('reserves the node IP of each host that gives a MAC, and only those', () => {
    const { assembled } = planOf(specWith({ w1: '52:54:00:AB:CD:EF' }));
    const conf = assembled.files.find((a) => a.remotePath === DNSMASQ_CONFIG);
    assert.ok(conf !== undefined, 'dnsmasq config rendered');
    assert.deepEqual(
      conf.content.split('\n').filter((l) => l.startsWith('dhcp-host=')),
      ['dhcp-host=52:54:00:ab:cd:ef,198.51.100.20,w1,infinite'],
    );
    assert.ok(assembled.plan.tasks.some((t) => t.id === 'task-create-services/svc/dnsmasq'));
    const { dir, remove } = scratch('dhcp');
    try {
      writeFileSync(join(dir, 'kubemix.conf'), conf.content);
      const r = spawnSync('dnsmasq', ['--test', `--conf-file=${join(dir, 'kubemix.conf')}`], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(r.status, 0, r.stderr);
    } finally {
      remove();
    }
  });

  it('without a MAC there is no dnsmasq task, and a warning says why', () => {
    const { spec, assembled } = planOf(specWith({}));
    assert.ok(!assembled.plan.tasks.some((t) => t.id.endsWith('/dnsmasq')));
    assert.ok(spec.warnings.some((w) => w.code === 'services.dhcp-existing'));
  });

  it('the plan table shows the MAC the spec gave', () => {
    const { assembled } = planOf(specWith({ cp1: '52:54:00:00:00:10' }));
    assert.equal(assembled.plan.nodes.find((n) => n.name === 'cp1')?.mac, '52:54:00:00:00:10');
    assert.equal(assembled.plan.nodes.find((n) => n.name === 'w1')?.mac, undefined);
  });
});
