// A client that keeps asking a Service, as a user's traffic would, while the
// cluster is upgraded: run as the deployer on the hypervisor (`node
// cluster-load.js OUT URL…`), it GETs the URLs in turn every INTERVAL ms
// with a 10 s limit and appends one line per request to OUT:
// `<ms since start> <url> ok <answer> in <ms>` or `… fail <why>`. SIGTERM
// ends it. The tier counts the lines: requests sent, failed, the slowest
// answer. The limit is a user's, not a probe's: in the real-cluster tier's
// run 36 one request of the first 28, right after the rollout, took longer
// than 3 s on the emulated guests (two cores for three of them) and failed,
// while nothing in the cluster had changed; a refused or reset connection
// still fails at once.
import { appendFileSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { argv } from 'node:process';

const INTERVAL_MS = 250;
const LIMIT_MS = 10_000;

export interface LoadSummary {
  readonly sent: number;
  readonly failed: number;
  /** The failures, as logged. */
  readonly failures: readonly string[];
  /** Who answered, and how often. */
  readonly answers: Readonly<Record<string, number>>;
  /** The longest an answer took, in ms (0 when none came). */
  readonly slowestMs: number;
}

export function summarise(file: string): LoadSummary {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => / (ok|fail) /.test(l));
  const failures = lines.filter((l) => / fail /.test(l));
  const answers: Record<string, number> = {};
  let slowestMs = 0;
  for (const l of lines) {
    const m = / ok (\S+) in (\d+)$/.exec(l);
    if (m?.[1] === undefined) continue;
    answers[m[1]] = (answers[m[1]] ?? 0) + 1;
    slowestMs = Math.max(slowestMs, Number(m[2]));
  }
  return { sent: lines.length, failed: failures.length, failures, answers, slowestMs };
}

/**
 * One GET, settled whatever happens: an answer cut off before its end fails
 * (run 37: such an answer left the promise pending, nothing else kept Node's
 * event loop alive, and the client exited 0 in the middle of the upgrade),
 * and a wall-clock limit covers the whole exchange, not only idle sockets.
 */
function once(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () =>
        res.statusCode === 200 ? resolve(body.trim()) : reject(new Error(`HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
      res.on('close', () => {
        if (!res.complete) reject(new Error('the connection closed before the answer ended'));
      });
    });
    const limit = setTimeout(() => req.destroy(new Error(`no answer in ${LIMIT_MS} ms`)), LIMIT_MS);
    req.on('error', reject);
    req.on('close', () => clearTimeout(limit));
  });
}

async function main(out: string, urls: readonly string[]): Promise<void> {
  const started = Date.now();
  let stop = false;
  process.on('SIGTERM', () => (stop = true));
  for (let i = 0; !stop; i++) {
    const url = urls[i % urls.length] ?? '';
    const t = Date.now();
    const line = await once(url).then(
      (body) => `ok ${body.split('\n')[0] ?? ''} in ${Date.now() - t}`,
      (e: Error) => `fail ${e.message.replaceAll('\n', ' ')}`,
    );
    appendFileSync(out, `${t - started} ${url} ${line}\n`);
    await new Promise((r) => setTimeout(r, Math.max(0, INTERVAL_MS - (Date.now() - t))));
  }
}

if (argv[1]?.endsWith('cluster-load.js') && argv[2] !== undefined) void main(argv[2], argv.slice(3));
