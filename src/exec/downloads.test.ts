import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ResolvedDownload } from '../model/downloads.js';
import { DownloadCache, fillDownloads, publishedHash, type Fetcher } from './downloads.js';

const hex = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
const BODY = Buffer.from('the release file\n');
const URL_ = 'https://example.invalid/releases/v1/tool-v1-linux-amd64.tgz';

function source(files: Record<string, Buffer | string>): { fetcher: Fetcher; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    fetcher: async (url) => {
      asked.push(url);
      const f = files[url];
      if (f === undefined) throw new Error('HTTP 404 Not Found');
      return Buffer.from(f);
    },
  };
}

describe('deployer download cache', () => {
  const dirs: string[] = [];
  const scratch = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'kubemix-dl-'));
    dirs.push(d);
    return d;
  };
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const open = (dir: string, fetcher: Fetcher, seed?: string, log: string[] = []): Promise<DownloadCache> =>
    DownloadCache.open({
      dir,
      seed,
      fetcher,
      signal: new AbortController().signal,
      report: (id, action) => void log.push(`${id} ${action}`),
    });

  it('reads the hash from the line naming the file, or a lone hash; nothing else', () => {
    const h = hex(BODY);
    assert.equal(
      publishedHash(`${'0'.repeat(64)}  other.tgz\n${h}  tool-v1-linux-amd64.tgz\n`, 'tool-v1-linux-amd64.tgz'),
      h,
    );
    assert.equal(publishedHash(`${h.toUpperCase()} *dist/tool-v1-linux-amd64.tgz\n`, 'tool-v1-linux-amd64.tgz'), h);
    assert.equal(publishedHash(`${h}\n`, 'kubelet.exe'), h);
    assert.equal(publishedHash(`${h}  other.tgz\n`, 'tool-v1-linux-amd64.tgz'), undefined);
    assert.equal(publishedHash('not a checksum\n', 'x'), undefined);
  });

  it('published hash: read once, remembered across runs; the file is fetched once and verified', async () => {
    const dir = scratch();
    const d: ResolvedDownload = {
      id: 'linux/tool',
      name: 'tool.tgz',
      version: '1',
      url: URL_,
      checksumUrl: `${URL_}.sha256`,
      hashFrom: 'published',
    };
    const src = source({ [URL_]: BODY, [`${URL_}.sha256`]: `${hex(BODY)}  tool-v1-linux-amd64.tgz\n` });
    const log: string[] = [];
    const first = await open(dir, src.fetcher, undefined, log);
    assert.equal((await first.content(d)).hash, hex(BODY));
    const second = await open(dir, src.fetcher, undefined, log);
    assert.deepEqual((await second.content(d)).content, BODY);
    assert.deepEqual(src.asked, [`${URL_}.sha256`, URL_]);
    assert.deepEqual(log, ['linux/tool fetched', 'linux/tool cached']);
    assert.deepEqual(readdirSync(join(dir, 'sha256')), [hex(BODY)]);
  });

  it('a fetched file whose hash differs is refused, named, and never cached', async () => {
    const dir = scratch();
    const d: ResolvedDownload = {
      id: 'windows/flanneld.exe',
      name: 'flanneld.exe',
      version: '0.28.4',
      url: URL_,
      sha256: hex('the real one'),
      hashFrom: 'matrix',
    };
    const cache = await open(dir, source({ [URL_]: BODY }).fetcher);
    await assert.rejects(cache.content(d), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(
          `windows/flanneld\\.exe: ${URL_.replace(/[./]/g, '\\$&')} has sha256 ${hex(BODY)}, but flanneld\\.exe 0\\.28\\.4 must have ${hex('the real one')} \\(pinned in the matrix\\); not used`,
        ),
      );
      return true;
    });
    assert.deepEqual(readdirSync(join(dir, 'sha256')), []);
  });

  it('--downloads DIR seeds by upstream name without touching the network; a wrong seed file is refused by path', async () => {
    const dir = scratch();
    const seed = scratch();
    writeFileSync(join(seed, 'tool-v1-linux-amd64.tgz'), BODY);
    const d: ResolvedDownload = {
      id: 'linux/tool',
      name: 'tool.tgz',
      version: '1',
      url: URL_,
      sha256: hex(BODY),
      hashFrom: 'spec',
    };
    const src = source({});
    const log: string[] = [];
    assert.deepEqual((await (await open(dir, src.fetcher, seed, log)).content(d)).content, BODY);
    assert.deepEqual(src.asked, []);
    assert.deepEqual(log, ['linux/tool seeded']);
    const bad = scratch();
    mkdirSync(join(bad, 'x'));
    writeFileSync(join(bad, 'tool.tgz'), 'not it');
    await assert.rejects(
      (await open(scratch(), src.fetcher, bad)).content(d),
      new RegExp(`${join(bad, 'tool.tgz').replace(/[./]/g, '\\$&')} has sha256`),
    );
  });

  it('a corrupt file in the cache is not used: fetched again', async () => {
    const dir = scratch();
    const d: ResolvedDownload = {
      id: 'linux/tool',
      name: 'tool.tgz',
      version: '1',
      url: URL_,
      sha256: hex(BODY),
      hashFrom: 'spec',
    };
    const src = source({ [URL_]: BODY });
    await (await open(dir, src.fetcher)).content(d);
    writeFileSync(join(dir, 'sha256', hex(BODY)), 'bit rot');
    assert.deepEqual((await (await open(dir, src.fetcher)).content(d)).content, BODY);
    assert.equal(src.asked.length, 2);
    assert.deepEqual(readFileSync(join(dir, 'sha256', hex(BODY))), BODY);
  });

  it('an unreachable checksum names the download and the pin that avoids it', async () => {
    const d: ResolvedDownload = {
      id: 'linux/runc',
      name: 'runc',
      version: '1.4.2',
      url: URL_,
      checksumUrl: `${URL_}.sha256sum`,
      hashFrom: 'published',
    };
    await assert.rejects(
      (await open(scratch(), source({}).fetcher)).hashOf(d),
      (e: Error & { hint?: string }) =>
        /linux\/runc: cannot read the published SHA256/.test(e.message) &&
        e.hint === 'let this machine reach it, or pin the hash: spec.downloads.linux/runc.sha256',
    );
  });

  it('fills {{sha256:ID}} and refuses an id the run did not resolve', () => {
    const h = hex(BODY);
    assert.equal(fillDownloads("want='{{sha256:linux/runc}}'", new Map([['linux/runc', h]]), 't'), `want='${h}'`);
    assert.throws(
      () => fillDownloads('{{sha256:windows/winsw.exe}}', new Map(), 'task-x apply'),
      /task-x apply: download windows\/winsw\.exe is not in the plan's downloads/,
    );
  });
});
