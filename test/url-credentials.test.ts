// Credentials in the spec's URLs (proxy.http/https, mirrors.artifacts,
// downloads.*.url) are secrets (model/url-credentials.ts): no byte of them in
// any file `plan --out` writes; the tasks name `{{secret:url-userinfo-…}}`;
// filled in at run time they give the node the right bytes, in 0600 files,
// through the escaping of each format (sh, curl config, systemd); the logs
// carry them redacted. The password is hostile on purpose: `@:/%'"$\`` and a
// command substitution the sandbox would record if it ever ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { InputError } from '../src/errors.js';
import { applyPlan } from '../src/exec/apply-plan.js';
import { DownloadCache, fillDownloads, withoutUserinfo } from '../src/exec/downloads.js';
import { Redactor, SecretStore } from '../src/exec/secrets.js';
import { prepareUploads } from '../src/exec/task-steps.js';
import type { RunContext } from '../src/exec/context.js';
import { resolveModel } from '../src/model/resolve.js';
import { splitUserinfo } from '../src/model/url-credentials.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { repoPath, runCli } from './helpers/cli.js';
import { runWithStubs } from './helpers/sh-sandbox.js';
import { assertNoLeak, filesUnder, leakForms, strict } from './helpers/url-credentials.js';

const PWN = 'kmxpwn';
const PASSWORD = `p@ss:w/%'"$\\\`$(${PWN} a)é`;
const USER = 'proxy.user';
const MIRROR_PASSWORD = `M1rr0r'"%40$(${PWN} m)`;
const DOWNLOAD_PASSWORD = `DLs3cr$t\\%%`;

const PROXY = `http://${USER}:${strict(PASSWORD)}@proxy.example:3128`;
const MIRROR = `https://mirror-user:${strict(MIRROR_PASSWORD)}@mirror.example/files`;
const DOWNLOAD = `https://dl-user:${strict(DOWNLOAD_PASSWORD)}@dl.example/containerd.tar.gz`;

/** Every form a credential could leak in. */
const LEAKS = [PASSWORD, MIRROR_PASSWORD, DOWNLOAD_PASSWORD]
  .flatMap(leakForms)
  .concat([USER, 'mirror-user', 'dl-user', strict(PASSWORD).replaceAll('%', '%%')]);

function specDoc(windows = false): Record<string, unknown> {
  const doc = parseYaml(readFileSync(repoPath('examples/existing-host-gw.yaml'), 'utf8')) as Record<string, unknown>;
  const spec = doc['spec'] as Record<string, unknown>;
  const infra = spec['infrastructure'] as { hosts: { os: string }[] };
  if (!windows) infra.hosts = infra.hosts.filter((h) => !h.os.startsWith('windows'));
  spec['services'] = { enabled: false };
  spec['proxy'] = { http: PROXY, https: PROXY };
  spec['mirrors'] = { artifacts: MIRROR };
  spec['downloads'] = { 'linux/containerd.tar.gz': { url: DOWNLOAD, sha256: 'a'.repeat(64) } };
  return doc;
}

function model(doc = specDoc()) {
  return resolveModel(readSpec({ kind: 'file', path: 'creds.yaml', text: stringify(doc) }));
}

test('plan --out with credentialed proxy, mirror and download URLs: no credential byte in any file; tasks name the secrets', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-urlcred-'));
  try {
    writeFileSync(join(dir, 'spec.yaml'), stringify(specDoc()));
    const r = await runCli(['plan', join(dir, 'spec.yaml'), '--out', join(dir, 'plan')]);
    assert.equal(r.code, 0, r.stderr);
    for (const text of [r.stdout, r.stderr])
      for (const leak of LEAKS) assert.ok(!text.includes(leak), `output holds ${leak}`);
    const files = filesUnder(join(dir, 'plan'));
    assert.ok(files.length > 10);
    assertNoLeak(files, LEAKS);
    const plan = readFileSync(join(dir, 'plan', 'plan.json'), 'utf8');
    for (const name of ['proxy-http', 'proxy-https', 'mirror-artifacts', 'download-linux_containerd.tar.gz'])
      assert.ok(plan.includes(`{{secret:url-userinfo-${name}}}`), name);
    const parsed = JSON.parse(plan) as { artifacts: { id: string; mode: string }[] };
    const dropIn = parsed.artifacts.find((a) => a.id.endsWith('containerd.service.d/http-proxy.conf'));
    assert.equal(dropIn?.mode, '0600');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function storeWith(values: Readonly<Record<string, string>>, dir: string): Promise<SecretStore> {
  const store = await SecretStore.open(join(dir, 'secrets.json'));
  await store.provide(values, true);
  return store;
}

test('filled in at run time: the node gets the exact credentials, in 0600 files, through sh, curl config and systemd', async () => {
  const m = model();
  const assembled = assemblePlan(m);
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-urlcred-'));
  try {
    const store = await storeWith(assembled.secrets ?? {}, dir);
    assert.equal(statSync(join(dir, 'secrets.json')).mode & 0o777, 0o600);
    // The systemd drop-in, as the executor uploads it.
    const task = assembled.plan.tasks.find((t) => t.id === 'task-prepare-cluster/lin1/containerd');
    assert.ok(task);
    const contents = new Map(
      assembled.plan.artifacts.map((a, i) => [a.id, Buffer.from(assembled.files[i]?.content ?? '')]),
    );
    const ctx = {
      secrets: store,
      artifacts: new Map(assembled.plan.artifacts.map((a) => [a.id, a])),
      contents,
      downloads: { hashes: new Map() },
    } as unknown as RunContext;
    const upload = prepareUploads(task, ctx).find((u) => u.remotePath.endsWith('http-proxy.conf'));
    assert.ok(upload, 'the containerd task uploads its proxy drop-in');
    assert.equal(upload.mode, '0600');
    const line = upload.content
      .toString('utf8')
      .split('\n')
      .find((l) => l.startsWith('Environment="HTTPS_PROXY='));
    // systemd reads `%%` as `%`; the URL's userinfo then decodes to the password.
    const url = new URL(/^Environment="HTTPS_PROXY=(.*)"$/.exec(line ?? '')?.[1]?.replaceAll('%%', '%') ?? '');
    assert.equal(decodeURIComponent(url.username), USER);
    assert.equal(decodeURIComponent(url.password), PASSWORD);
    assert.ok(!(line ?? '').replaceAll('%%', '').includes('%'), `a lone % is a systemd specifier: ${line}`);

    // Every sh script naming a URL secret, filled as the executor fills it, run with stubs: curl sees the
    // credentials through its 0600 config file and the proxy environment, never on its command line.
    const REPORT = `mktemp() { /usr/bin/mktemp "$@"; }
curl() {
  conf=''; prev=''
  for a in "$@"; do [ "$prev" = -K ] && conf=$a; prev=$a; done
  kmxcurl "$@" "conf=$(/usr/bin/cat "$conf" 2>/dev/null)" "mode=$(/usr/bin/stat -c %a "$conf" 2>/dev/null)" "proxy=$HTTPS_PROXY"
}
`;
    const scripts = assembled.plan.tasks
      .filter((t) => t.host === 'lin1' && t.apply.shell === 'sh' && t.apply.script.includes('{{secret:url-userinfo-'))
      .map((t) => {
        const hashes = new Map(assembled.plan.downloads?.map((d) => [d.id, 'b'.repeat(64)]) ?? []);
        return { id: t.id, script: REPORT + fillDownloads(store.fill(t.apply.script, t.id), hashes, t.id) };
      });
    assert.ok(scripts.length >= 3, scripts.map((s) => s.id).join(', '));
    const calls = runWithStubs(scripts.map((s) => s.script));
    let viaConfig = 0;
    scripts.forEach((s, i) => {
      for (const c of calls[i] ?? []) {
        assert.ok(!(c.argv[0] ?? '').startsWith(PWN), `${s.id}: the password ran ${JSON.stringify(c.argv)}`);
        if (c.argv[0] !== 'kmxcurl') continue;
        const args = c.argv.slice(1, -3);
        for (const leak of LEAKS) assert.ok(!args.some((a) => a.includes(leak)), `${s.id}: curl's argv holds ${leak}`);
        const proxy = new URL(c.argv.at(-1)?.slice('proxy='.length) ?? '');
        assert.equal(decodeURIComponent(proxy.password), PASSWORD, `${s.id}: HTTPS_PROXY`);
        const conf = c.argv.at(-3) ?? '';
        if (conf === 'conf=') continue;
        viaConfig++;
        assert.equal(c.argv.at(-2), 'mode=600', `${s.id}: the curl config holding the URL is 0600`);
        const fetched = new URL(/^conf=url = "(.*)"$/.exec(conf)?.[1] ?? '');
        const want = fetched.hostname === 'dl.example' ? DOWNLOAD_PASSWORD : MIRROR_PASSWORD;
        assert.equal(decodeURIComponent(fetched.password), want, `${s.id}: ${conf}`);
      }
    });
    assert.ok(viaConfig >= 2, `curl read a credentialed URL from its config ${viaConfig} time(s)`);

    // Logs and events: a line holding the filled values comes out redacted.
    const redactor = new Redactor(store);
    const filled = store.fill(`curl: (7) Failed to connect to {{secret:url-userinfo-proxy-http}}@proxy.example`, 'x');
    assert.ok(!LEAKS.some((l) => redactor.redact(filled).includes(l)), redactor.redact(filled));
    const systemd = store.fill('HTTP_PROXY=http://{{secret:url-userinfo-proxy-http.systemd}}@proxy', 'x');
    assert.ok(!LEAKS.some((l) => redactor.redact(systemd).includes(l)), redactor.redact(systemd));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the deployer fetches a credentialed download with a Basic header, never with the credentials in the URL', async () => {
  const plain = withoutUserinfo(`https://dl-user:${strict(DOWNLOAD_PASSWORD)}@dl.example/x.tgz`);
  assert.equal(plain.url, 'https://dl.example/x.tgz');
  assert.equal(
    Buffer.from(plain.headers['authorization']?.slice('Basic '.length) ?? '', 'base64').toString(),
    `dl-user:${DOWNLOAD_PASSWORD}`,
  );
  const m = model();
  const d = assemblePlan(m).plan.downloads?.find((x) => x.id === 'linux/containerd.tar.gz');
  assert.ok(d !== undefined && d.url.includes('{{secret:url-userinfo-download-linux_containerd.tar.gz}}'), d?.url);
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-urlcred-'));
  try {
    const store = await storeWith(m.urlSecrets, dir);
    const asked: string[] = [];
    const cache = await DownloadCache.open({
      dir: join(dir, 'downloads'),
      fetcher: (url) => (asked.push(url), Promise.reject(new Error('offline'))),
      fill: (url) => store.fill(url, 'download URL'),
      signal: new AbortController().signal,
      report: () => undefined,
    });
    await assert.rejects(cache.content(d), (e: Error) => {
      for (const leak of LEAKS) assert.ok(!e.message.includes(leak), e.message);
      return /\{\{secret:url-userinfo-download/.test(e.message);
    });
    assert.equal(decodeURIComponent(new URL(asked[0] ?? '').password), DOWNLOAD_PASSWORD);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a plan run without its spec on a state directory lacking the credentials is refused before anything runs', async () => {
  const assembled = assemblePlan(model());
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-urlcred-'));
  try {
    const contents = new Map(
      assembled.plan.artifacts.map((a, i) => [a.id, Buffer.from(assembled.files[i]?.content ?? '')]),
    );
    await assert.rejects(
      applyPlan(assembled.plan, contents, {
        stateDir: join(dir, 'state'),
        signal: new AbortController().signal,
        transportFor: () => assert.fail('no host may be reached'),
      }),
      (e: unknown) =>
        e instanceof InputError &&
        e.code === 'secret.url-credentials-missing' &&
        /url-userinfo-proxy-http/.test(e.message) &&
        /kubemix up SPEC --plan DIR/.test(e.hint ?? ''),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('up SPEC hands the credentials to the state directory (0600, source read); --check keeps them in memory', async () => {
  const assembled = assemblePlan(model());
  const contents = new Map(
    assembled.plan.artifacts.map((a, i) => [a.id, Buffer.from(assembled.files[i]?.content ?? '')]),
  );
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-urlcred-'));
  const refuse = (): never => {
    throw new Error('no host in this test');
  };
  const run = (check: boolean, state: string) =>
    applyPlan(assembled.plan, contents, {
      stateDir: state,
      check,
      only: ['cp1'],
      stopAfter: 'task-gather-facts',
      signal: new AbortController().signal,
      transportFor: () => ({
        host: 'cp1',
        connected: false,
        connect: refuse,
        exec: refuse,
        upload: refuse,
        readFile: refuse,
        close: async () => undefined,
      }),
      provided: assembled.secrets ?? {},
    }).catch((e: unknown) => e);
  try {
    await run(true, join(dir, 'checked'));
    assert.ok(!readdirSync(join(dir, 'checked')).includes('secrets.json'), '--check wrote the secret store');
    await run(false, join(dir, 'applied'));
    const file = join(dir, 'applied', 'secrets.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { value: string; source: string }>;
    const proxy = stored['url-userinfo-proxy-http'];
    assert.equal(proxy?.source, 'read');
    assert.equal(decodeURIComponent(proxy?.value.split(':')[1] ?? ''), PASSWORD);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('userinfo written loosely (raw $ ( ) ! * &) is stored strictly percent-encoded: nothing any format unquotes', () => {
  const raw = `http://u$(${PWN}):pa$(${PWN})!*&+,;=~@proxy.example:3128/`;
  const s = splitUserinfo(raw, 'url-userinfo-proxy-http');
  assert.equal(s.url, 'http://{{secret:url-userinfo-proxy-http}}@proxy.example:3128/');
  const value = s.secrets['url-userinfo-proxy-http'] ?? '';
  assert.match(value, /^[A-Za-z0-9._~%-]+:[A-Za-z0-9._~%-]+$/);
  assert.equal(decodeURIComponent(value.split(':')[1] ?? ''), `pa$(${PWN})!*&+,;=~`);
  assert.equal(s.secrets['url-userinfo-proxy-http.systemd'], value.replaceAll('%', '%%'));
});

test('credentials Windows nodes or the libvirt image fetch would hold are refused, naming the field', () => {
  assert.throws(
    () => model(specDoc(true)),
    (e: unknown) =>
      e instanceof InputError && e.code === 'spec.url-credentials-windows' && e.path === 'spec.proxy.http',
  );
  const doc = specDoc();
  const spec = doc['spec'] as Record<string, unknown>;
  spec['downloads'] = { 'images/debian-13': { url: DOWNLOAD, sha256: 'a'.repeat(64) } };
  assert.throws(
    () => model(doc),
    (e: unknown) =>
      e instanceof InputError &&
      e.code === 'spec.url-credentials-images' &&
      e.path === 'spec.downloads.images/debian-13.url',
  );
});

test('a URL without credentials plans as before: no secret, no 0600', () => {
  const doc = specDoc();
  const spec = doc['spec'] as Record<string, unknown>;
  spec['proxy'] = { http: 'http://proxy.example:3128' };
  delete spec['mirrors'];
  delete spec['downloads'];
  const m = model(doc);
  assert.deepEqual(m.urlSecrets, {});
  const { plan } = assemblePlan(m);
  assert.ok(!JSON.stringify(plan).includes('url-userinfo-'));
  assert.equal(plan.artifacts.find((a) => a.id.endsWith('http-proxy.conf'))?.mode, '0644');
});
