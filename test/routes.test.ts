// `kubemix routes`: the `ip` format is applied for real with `ip -batch`
// inside a network namespace this test creates (and always deletes), then
// read back with `ip route show`.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCli } from './helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kubemix-routes-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function canUseNetns(): string | false {
  if (process.getuid?.() !== 0) return 'needs root for ip netns';
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'ip netns is not available (Debian package iproute2)';
  }
}

interface PlanDoc {
  cluster: { network: { nodeCidr: string; gateway: string } };
  nodes: { name: string; ip: string; podCidr?: { cidr: string } }[];
}

async function planOf(spec: string): Promise<PlanDoc> {
  return JSON.parse((await runCli(['plan', spec, '--json'])).stdout) as PlanDoc;
}

/** Apply a batch file in a fresh namespace whose one link holds the node network; return `ip route show`. */
function applyInNamespace(batch: string, gateway: string, prefix: string): string {
  const ns = `kmroutes${process.pid}`;
  const ip = (...args: string[]) => execFileSync('ip', ['-n', ns, ...args], { encoding: 'utf8', timeout: 10_000 });
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    ip('link', 'add', 'rta', 'type', 'veth', 'peer', 'name', 'rtb');
    ip('addr', 'add', `${gateway}/${prefix}`, 'dev', 'rta');
    ip('link', 'set', 'rta', 'up');
    ip('link', 'set', 'rtb', 'up');
    const file = join(tmp, `${ns}.batch`);
    writeFileSync(file, batch);
    ip('-batch', file);
    return ip('route', 'show');
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
}

describe('kubemix routes --format ip under ip -batch', { skip: canUseNetns() }, () => {
  for (const spec of ['k8s-libvirt-3-2-1', 'examples/existing-host-gw.yaml']) {
    it(`${spec}: every pod CIDR routed to its node`, async () => {
      const r = await runCli(['routes', spec, '--format', 'ip']);
      assert.equal(r.code, 0, r.stderr);
      const plan = await planOf(spec);
      const shown = applyInNamespace(
        r.stdout,
        plan.cluster.network.gateway,
        plan.cluster.network.nodeCidr.split('/')[1] ?? '24',
      );
      for (const n of plan.nodes.filter((x) => x.podCidr !== undefined)) {
        assert.match(
          shown,
          new RegExp(
            `^${n.podCidr?.cidr.replace(/\./g, '\\.')} via ${n.ip.replace(/\./g, '\\.')} dev rta proto static`,
            'm',
          ),
        );
      }
    });
  }

  it('host-gw: a node gets routes to every other node, none to itself', async () => {
    const r = await runCli(['routes', 'examples/existing-host-gw.yaml', '--format', 'ip', '--node', 'win1']);
    assert.equal(r.code, 0, r.stderr);
    const shown = applyInNamespace(r.stdout, '192.0.2.30', '24');
    assert.match(shown, /^10\.244\.0\.0\/24 via 192\.0\.2\.10 /m);
    assert.match(shown, /^10\.244\.1\.0\/24 via 192\.0\.2\.20 /m);
    assert.doesNotMatch(shown, /10\.244\.2\.0\/24/);
  });
});

describe('kubemix routes formats', () => {
  it('table marks pod CIDRs predicted; cisco uses masks; vxlan has no host-gw section', async () => {
    const t = await runCli(['routes', 'k8s-libvirt-1-1-1']);
    assert.equal(t.code, 0);
    assert.match(t.stdout, /10\.244\.0\.0\/24\s+10\.0\.0\.1\s+controller-01\s+predicted/);
    assert.doesNotMatch(t.stdout, /host-gw/);
    const c = await runCli(['routes', 'k8s-libvirt-1-1-1', '--format', 'cisco']);
    assert.match(c.stdout, /^ip route 10\.244\.1\.0 255\.255\.255\.0 10\.0\.0\.2 name compute-01-pods-predicted$/m);
  });

  it('bad --format and unknown --node are exit 2', async () => {
    assert.equal((await runCli(['routes', 'k8s-libvirt-1-1-1', '--format', 'juniper'])).code, 2);
    assert.equal((await runCli(['routes', 'k8s-libvirt-1-1-1', '--format', 'ip', '--node', 'nope'])).code, 2);
  });
});
