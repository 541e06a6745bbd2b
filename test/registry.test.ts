// The registry as the services node runs it: the plan's own TLS and htpasswd
// scripts (secrets filled in the way the executor does), then Debian's
// docker-registry started on loopback with the rendered config (paths and
// address adapted) must answer /v2/ with 401 unless the credentials are right.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SERVICES } from '../src/matrix/index.js';
import { servicesFacts } from '../src/render/services/facts.js';
import { REGISTRY_PATHS, renderRegistryConfig } from '../src/render/services/registry.js';
import {
  htpasswdApply,
  htpasswdCheck,
  registryTlsApply,
  registryTlsCheck,
  registryTlsSecrets,
} from '../src/plan/tasks/registry-scripts.js';
import { generateClusterCa } from '../src/exec/cluster-ca.js';
import { issueServingTls } from '../src/exec/serving-tls.js';
import { modelFor, scratch } from './helpers/shapes.js';

const PASSWORD = 'canary-Registry-pw-7f3a';

function fill(script: string, secrets: Record<string, string>): string {
  return script.replace(/\{\{secret:([A-Za-z0-9_.-]+)\}\}/g, (_, name: string) => {
    const value = secrets[name];
    if (value === undefined) throw new Error(`no secret ${name}`);
    return value.trimEnd();
  });
}

function sh(script: string): number {
  return spawnSync('sh', ['-s'], { input: script, stdio: ['pipe', 'ignore', 'pipe'], timeout: 20_000 }).status ?? -1;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

function get(port: number, ca: string, servername: string, auth?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = auth === undefined ? {} : { authorization: `Basic ${Buffer.from(auth).toString('base64')}` };
    const req = request({ host: '127.0.0.1', port, path: '/v2/', ca, servername, headers, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('registry on loopback with the rendered config', () => {
  const facts = servicesFacts(modelFor('k8s-libvirt-1-1-1'));
  assert.ok(facts !== undefined);
  const tmp = scratch('registry');
  const tls = { dir: join(tmp.dir, 'tls'), group: 'root', host: facts.registryHost, ip: facts.node.ip };
  const htpasswd = join(tmp.dir, 'htpasswd');
  let secrets: Record<string, string> = {};
  let registry: ChildProcess | undefined;
  let port = 0;

  before(() => {
    // The cluster CA and the registry certificate as the executor makes them on the deployer.
    const ca = generateClusterCa();
    const issued = issueServingTls(ca.cert, ca.key, tls.host, tls.ip, SERVICES.registryCertDays);
    const names = registryTlsSecrets(tls);
    secrets = {
      'cluster-ca-cert': ca.cert,
      [names.cert]: issued.cert,
      [names.key]: issued.key,
      'registry-password': PASSWORD,
    };
  });

  after(() => {
    if (registry?.pid !== undefined && registry.exitCode === null) process.kill(registry.pid, 'SIGTERM');
    tmp.remove();
  });

  it('TLS task: check fails, apply makes a certificate the check accepts', () => {
    assert.notEqual(sh(fill(registryTlsCheck(tls).text, secrets)), 0);
    assert.equal(sh(fill(registryTlsApply(tls).text, secrets)), 0);
    assert.equal(sh(fill(registryTlsCheck(tls).text, secrets)), 0);
    // The scripts never see the CA's key: filling them without it must work.
    assert.doesNotMatch(registryTlsApply(tls).text + registryTlsCheck(tls).text, /cluster-ca-key|CAkey/);
  });

  it('TLS task: a re-issued certificate in the store fails the check until applied', () => {
    const ca = generateClusterCa();
    const names = registryTlsSecrets(tls);
    const other = issueServingTls(ca.cert, ca.key, tls.host, tls.ip, 10);
    const next = { ...secrets, 'cluster-ca-cert': ca.cert, [names.cert]: other.cert, [names.key]: other.key };
    assert.notEqual(sh(fill(registryTlsCheck(tls).text, next)), 0);
    assert.equal(sh(fill(registryTlsApply(tls).text, next)), 0);
    // Ten days left: the check still refuses it (it wants 30 more days).
    assert.notEqual(sh(fill(registryTlsCheck(tls).text, next)), 0);
    assert.equal(sh(fill(registryTlsApply(tls).text, secrets)), 0);
    assert.equal(sh(fill(registryTlsCheck(tls).text, secrets)), 0);
  });

  it('htpasswd task: check fails, apply, check passes; a changed password fails it again', () => {
    assert.notEqual(sh(fill(htpasswdCheck(htpasswd).text, secrets)), 0);
    assert.equal(sh(fill(htpasswdApply(htpasswd, 'root').text, secrets)), 0);
    assert.equal(sh(fill(htpasswdCheck(htpasswd).text, secrets)), 0);
    assert.notEqual(sh(fill(htpasswdCheck(htpasswd).text, { ...secrets, 'registry-password': 'other' })), 0);
  });

  it('docker-registry serves /v2/ only with the right credentials', async () => {
    port = await freePort();
    const rendered = renderRegistryConfig(facts).content;
    const config = rendered
      .replaceAll(REGISTRY_PATHS.tlsDir, tls.dir)
      .replaceAll(REGISTRY_PATHS.htpasswd, htpasswd)
      .replaceAll(REGISTRY_PATHS.storage, join(tmp.dir, 'storage'))
      .replace(`addr: :${SERVICES.registryPort}`, `addr: 127.0.0.1:${port}`);
    assert.notEqual(config, rendered);
    writeFileSync(join(tmp.dir, 'config.yml'), config);
    registry = spawn('docker-registry', ['serve', join(tmp.dir, 'config.yml')], { stdio: 'ignore' });
    const ca = secrets['cluster-ca-cert'] ?? '';
    let status = 0;
    for (let i = 0; i < 50 && status === 0; i += 1) {
      status = await get(port, ca, facts.registryHost).catch(() => 0);
      if (status === 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 401);
    assert.equal(await get(port, ca, facts.registryHost, `${SERVICES.registryUser}:wrong`), 401);
    assert.equal(await get(port, ca, facts.registryHost, `${SERVICES.registryUser}:${PASSWORD}`), 200);
  });
});
