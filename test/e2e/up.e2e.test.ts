// e2e tier: `kubemix up` against a real Debian 12 VM (qemu, software
// emulation). Only fact gathering and validations run here: the VM is a
// control plane of an `existing`-driver spec, reached over SSH with a pinned
// host key. Runs under `npm run test:e2e` only (KUBEMIX_E2E=1): it boots a VM
// and may build the base image, far beyond the regular suite's budget.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { repoPath, runCli } from '../helpers/cli.js';
import { VmNet, vmsAvailable } from './vm.js';

const skip = process.env['KUBEMIX_E2E'] === '1' ? vmsAvailable() : 'the VM tier runs with npm run test:e2e (KUBEMIX_E2E=1)';
const log = (line: string): void => void process.stderr.write(`# e2e: ${line}\n`);

/** The real launcher in a child process, killed after `timeoutMs` (code null then). */
function cli(argv: readonly string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [repoPath('bin', 'kubemix.js'), ...argv], { timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, KUBEMIX_RETRY_ATTEMPTS: '2' } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('kubemix up SPEC on a real VM', { skip, timeout: 20 * 60_000 }, () => {
  const started = Date.now();
  let net: VmNet;
  let specFile: string;
  let knownHosts: string;
  const up = (): ReturnType<typeof runCli> => runCli(['up', specFile, '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'], { env: { KUBEMIX_RETRY_ATTEMPTS: '2' } });

  before(async () => {
    net = await VmNet.create(1, { cpus: 2, memoryMiB: 2048, log });
    log(`vm-1 answers SSH ${((Date.now() - started) / 1000).toFixed(1)} s after the start (image build included when not cached)`);
    const vm = net.vms[0]!;
    knownHosts = join(net.root, 'known_hosts');
    writeFileSync(knownHosts, `${net.knownHostsLine(vm)}\n`);
    specFile = join(net.root, 'cluster.yaml');
    writeFileSync(
      specFile,
      stringify({
        apiVersion: 'kubemix.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'lab' },
        spec: {
          kubernetes: { version: '1.36' },
          network: { nodeCidr: '198.51.100.0/24' },
          infrastructure: { driver: 'existing', hosts: [{ name: vm.name, address: vm.address, roles: ['control-plane'], os: 'debian-12', identityFile: net.clientKey }] },
          services: { enabled: false },
        },
      }),
    );
  });
  after(() => {
    net?.cleanup();
    log(`tier wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it('gathers the VM facts and passes the control-plane validations', async () => {
    const r = await up();
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\nconsole:\n${net.consoleTail(net.vms[0]!)}`);
    const dir = join(net.root, '.kubemix', 'lab', 'facts', 'vm-1');
    const facts = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    assert.match(facts, /cpus=2\b/, facts);
    const ram = Number(/ramMiB=(\d+)/.exec(facts)?.[1]);
    assert.ok(ram >= 1700 && ram <= 2048, `ramMiB=${ram}`);
    assert.match(facts, /debian/i);
  });

  it('re-running changes nothing', async () => {
    const r = await up();
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const out = `${r.stdout}\n${r.stderr}`;
    assert.doesNotMatch(out, /\(changed\)/, out);
    assert.match(out, /\bok in /, out);
    log(`re-run: ${out.trim().split('\n').at(-1)}`);
  });

  // Check-less tasks (facts, validations) already done with the same inputs count as no change.
  // Run as a child process: in-process, an `up --check` once kept the test process alive after
  // the VM was gone (see docs/e2e.md).
  it('--check runs every check on the VM again and finds nothing to change', async () => {
    const started = Date.now();
    const r = await cli(['up', specFile, '--check', '--known-hosts', knownHosts, '--stop-after', 'task-run-validations'], 60_000);
    log(`up --check: exit ${r.code} after ${((Date.now() - started) / 1000).toFixed(1)} s${r.code === null ? ' (killed: it did not exit)' : ''}`);
    const out = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.code, 0, out);
    assert.match(out, /; 0 task\(s\) would change/, out);
  });

  it('status: exit 1, the later stages are left', async () => {
    const status = await runCli(['status', specFile]);
    assert.equal(status.code, 1, `${status.stdout}\n${status.stderr}`);
    assert.match(status.stdout, /vm-1\s+2\s+\d+\s+0\s+task-prepare-cluster\/vm-1\//, status.stdout);
  });
});
