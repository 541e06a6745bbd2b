// The golden form of a trace: one block per task in the order the executor
// ran them, each step on a line. Scripts are the plan's (a test asserts it),
// so only their lines that carry a secret reference are shown, where the
// reference is the point; plan.json goldens hold the full text.
import type { Trace } from './run-trace.js';
import type { TraceStep } from './recording-target.js';

const WIDTH = 160;

function clip(line: string): string {
  const t = line.trim();
  return t.length > WIDTH ? `${t.slice(0, WIDTH - 1)}…` : t;
}

function head(s: TraceStep): string {
  const filled = s.filled.length > 0 ? `  secrets: ${s.filled.join(', ')}` : '';
  switch (s.kind) {
    case 'upload':
      return `  upload  ${s.path ?? ''} ${s.mode ?? ''}${filled}`;
    case 'capture':
      return `  capture ${s.path ?? ''} -> {{secret:${s.secret ?? '?'}}}`;
    case 'probe':
      return `  probe   sha256 of the uploads' destinations`;
    case 'cache-probe':
      return `  probe   sha256 of the download cache's files`;
    case 'cache-upload':
      return `  cache   ${s.download ?? '?'} → ${s.path ?? ''} ${s.mode ?? ''}`;
    default:
      return `  ${s.kind.padEnd(7)} ${s.shell} ${s.privilege}${filled}`;
  }
}

/** Lines that fetch a download: where from, by which hash reference. */
function fetchLines(s: TraceStep): string[] {
  return (s.script ?? '').split('\n').filter((l) => /\{\{sha256:[^}]+\}\}/.test(l) && /https?:\/\//.test(l));
}

function stepLines(s: TraceStep): string[] {
  return [
    head(s),
    ...s.references.map((l) => `          | ${clip(l)}`),
    ...fetchLines(s).map((l) => `          > ${clip(l)}`),
  ];
}

export function renderTrace(trace: Trace): string {
  const head = [
    `# kubemix ${trace.command} ${`examples/${trace.example}.yaml`}: executor trace against a recording target (nothing executed)`,
    '# checks answer "not done" (after a rebooting task\'s apply: "done", the host is back), applies "ok"; secrets appear only as {{secret:NAME}}',
    "# order: the executor's with --concurrency 1, one task at a time across hosts (the earliest in plan order goes first)",
    "# scripts are the plan's (asserted); shown here: the lines that carry a secret reference (|) and that fetch a download (>)",
  ];
  const out = [...head];
  let current = '';
  let n = 0;
  for (const s of trace.steps) {
    if (s.task !== current) {
      current = s.task;
      n += 1;
      out.push('', `${String(n).padStart(3)} ${s.task}`);
    }
    out.push(...stepLines(s));
  }
  return `${out.join('\n')}\n`;
}
