// ESLint-style text: findings grouped by file, `line:col  severity  message
// rule`, a hint under each, a count at the end. Colours only when asked.
import type { Finding } from '../findings.js';
import { summarize } from '../findings.js';
import type { Rule } from '../rules/types.js';

export interface TextOptions {
  readonly color: boolean;
}

function paint(on: boolean, code: number, text: string): string {
  return on ? `\u001b[${code}m${text}\u001b[0m` : text;
}

function subject(f: Finding): string {
  if (f.object === undefined) return '';
  const ns = f.object.namespace === undefined ? '' : `${f.object.namespace}/`;
  const container = f.container === undefined ? '' : ` container ${f.container}`;
  return `${f.object.kind} ${ns}${f.object.name}${container}: `;
}

export function formatText(findings: readonly Finding[], options: TextOptions): string {
  if (findings.length === 0) return '';
  const lines: string[] = [];
  const files = [...new Set(findings.map((f) => f.file))];
  for (const file of files) {
    const own = findings.filter((f) => f.file === file);
    const posWidth = Math.max(...own.map((f) => `${f.line}:${f.column}`.length));
    lines.push(paint(options.color, 4, file));
    for (const f of own) {
      const pos = `${f.line}:${f.column}`.padEnd(posWidth);
      const sev = f.severity === 'error' ? paint(options.color, 31, 'error  ') : paint(options.color, 33, 'warning');
      const source = f.osSource === undefined ? '' : ` (image OS: ${f.osSource})`;
      lines.push(`  ${pos}  ${sev}  ${subject(f)}${f.message}${source}  ${paint(options.color, 2, f.rule)}`);
      if (f.hint !== undefined)
        lines.push(`  ${' '.repeat(posWidth)}  ${' '.repeat(7)}  ${paint(options.color, 2, `hint: ${f.hint}`)}`);
    }
    lines.push('');
  }
  const s = summarize(findings);
  const total = s.errors + s.warnings;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const mark = paint(options.color, s.errors > 0 ? 31 : 33, '✖');
  lines.push(`${mark} ${plural(total, 'problem')} (${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')})`);
  return `${lines.join('\n')}\n`;
}

export function formatRulesText(rules: readonly Rule[]): string {
  const width = Math.max(...rules.map((r) => r.id.length));
  const lines = rules.map((r) => {
    const tags = [r.needsCluster ? 'needs cluster' : '', r.fixable ? 'fixable' : ''].filter((t) => t !== '').join(', ');
    return `${r.id.padEnd(width)}  ${r.severity.padEnd(7)}  ${r.why}${tags === '' ? '' : ` [${tags}]`}`;
  });
  return `${lines.join('\n')}\n`;
}
