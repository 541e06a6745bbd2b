// A client that keeps asking a Service, as a user's traffic would, while the
// cluster is upgraded: run as the deployer on the hypervisor (`node
// cluster-load.js OUT URL…`), it GETs the URLs (one NodePort per node) in
// turn every INTERVAL ms with a 10 s limit and appends one line per request
// to OUT: `<ms since start> <url> ok <answer> in <ms>` or `… fail <why>`.
// SIGTERM ends it. The tier counts the lines: requests sent, failed, the
// slowest answer.
//
// The limit is a user's, not a probe's: in the real-cluster tier's run 36
// one request of the first 28, right after the rollout, took longer than 3 s
// on the emulated guests (two cores for three of them) and failed while
// nothing in the cluster had changed. A request that gets no answer is asked
// once more through the next node's NodePort, as a load balancer in front of
// NodePorts does (HAProxy's `retries` with `option redispatch`): that line,
// `… miss <why>`, is counted apart, and only a request that both nodes left
// unanswered fails. Run 37's upgrade, resumed by hand, saw 5 of 2051 single
// requests unanswered within 10 s while the emulated control plane (load 15)
// restarted its kubelet and API server, 3 through its own NodePort and 2
// through the worker's.
import { appendFileSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { argv } from 'node:process';

const INTERVAL_MS = 250;
const LIMIT_MS = 10_000;

export interface LoadSummary {
  readonly sent: number;
  readonly failed: number;
  /** First tries that got no answer and were asked again through the next node. */
  readonly missed: number;
  /** The failures, as logged. */
  readonly failures: readonly string[];
  /** Who answered, and how often. */
  readonly answers: Readonly<Record<string, number>>;
  /** The longest an answer took, in ms (0 when none came). */
  readonly slowestMs: number;
}

export function summarise(file: string): LoadSummary {
  const all = readFileSync(file, 'utf8').split('\n');
  const lines = all.filter((l) => / (ok|fail) /.test(l));
  const missed = all.filter((l) => / miss /.test(l)).length;
  const failures = lines.filter((l) => / fail /.test(l));
  const answers: Record<string, number> = {};
  let slowestMs = 0;
  for (const l of lines) {
    const m = / ok (\S+) in (\d+)$/.exec(l);
    if (m?.[1] === undefined) continue;
    answers[m[1]] = (answers[m[1]] ?? 0) + 1;
    slowestMs = Math.max(slowestMs, Number(m[2]));
  }
  return { sent: lines.length, failed: failures.length, missed, failures, answers, slowestMs };
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

/** One logged exchange: `ok <answer> in <ms>` or `<word> <why>`. */
function ask(url: string, failWord: string): Promise<{ line: string; answered: boolean }> {
  const t = Date.now();
  return once(url).then(
    (body) => ({ line: `ok ${body.split('\n')[0] ?? ''} in ${Date.now() - t}`, answered: true }),
    (e: Error) => ({ line: `${failWord} ${e.message.replaceAll('\n', ' ')}`, answered: false }),
  );
}

async function main(out: string, urls: readonly string[]): Promise<void> {
  const started = Date.now();
  let stop = false;
  process.on('SIGTERM', () => (stop = true));
  for (let i = 0; !stop; i++) {
    const url = urls[i % urls.length] ?? '';
    const t = Date.now();
    const first = await ask(url, 'miss');
    appendFileSync(out, `${t - started} ${url} ${first.line}\n`);
    if (!first.answered) {
      const next = urls[(i + 1) % urls.length] ?? '';
      const t2 = Date.now();
      appendFileSync(out, `${t2 - started} ${next} ${(await ask(next, 'fail')).line}\n`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, INTERVAL_MS - (Date.now() - t))));
  }
}

if (argv[1]?.endsWith('cluster-load.js') && argv[2] !== undefined) void main(argv[2], argv.slice(3));
