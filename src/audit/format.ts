// The audit as text (for `kubemix plan --audit`) and as a Markdown table
// (docs/windows.md): one row per component, credential and request, with
// the rule that allows it; nodes with the same row are listed together.
import { credentialLabel, requestText } from './audit.js';
import type { AuditResult } from './types.js';

interface Row {
  readonly component: string;
  readonly os: string;
  readonly runsOn: string[];
  readonly credential: string;
  readonly request: string;
  readonly decision: string;
  readonly source: string;
}

/** Rows, merging nodes whose component, credential and decisions are the same. */
export function auditRows(result: AuditResult): Row[] {
  const rows = new Map<string, Row>();
  for (const { component, decisions } of result.components) {
    const credential = credentialLabel(component.credential).replace(/^node \S+ /, 'node ');
    for (const d of decisions) {
      const request = requestText(d.request);
      const decision = `${d.allowed ? 'allowed' : 'DENIED'}: ${d.by}`;
      const key = [component.name, component.os, credential, request, decision].join('|');
      const row = rows.get(key);
      if (row === undefined)
        rows.set(key, {
          component: component.name,
          os: component.os,
          runsOn: [component.runsOn],
          credential,
          request,
          decision,
          source: d.request.source,
        });
      else if (!row.runsOn.includes(component.runsOn)) row.runsOn.push(component.runsOn);
    }
  }
  return [...rows.values()];
}

export function auditText(result: AuditResult): string {
  const lines: string[] = [];
  let last = '';
  for (const r of auditRows(result)) {
    const head = `${r.component} (${r.os}) on ${r.runsOn.join(', ')} — ${r.credential}`;
    if (head !== last) lines.push('', head);
    last = head;
    lines.push(
      `  ${r.decision.startsWith('allowed') ? 'ok  ' : 'FAIL'} ${r.request}  [${r.decision.replace(/^(allowed|DENIED): /, '')}]  (${r.source})`,
    );
  }
  lines.push(
    '',
    ...result.findings.map((f) => `${f.severity === 'error' ? 'FAIL' : 'note'} ${f.credential}: ${f.message}`),
  );
  lines.push(
    '',
    result.ok
      ? 'authorization audit: every needed request is allowed, nothing broader'
      : `authorization audit FAILED: ${result.findings.filter((f) => f.severity === 'error').length} problem(s)`,
  );
  return `${lines.join('\n').trimStart()}\n`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');

export function auditMarkdown(result: AuditResult): string {
  const head =
    '| component | OS | runs on | credential | request | decision | upstream source |\n|---|---|---|---|---|---|---|\n';
  return (
    head +
    auditRows(result)
      .map(
        (r) =>
          `| ${[r.component, r.os, r.runsOn.join(', '), r.credential, r.request, r.decision, r.source].map(cell).join(' | ')} |`,
      )
      .join('\n') +
    '\n'
  );
}

/** One row per component and credential: its requests and what allows them (docs/windows.md). */
export function auditSummaryMarkdown(result: AuditResult): string {
  const rows = new Map<
    string,
    {
      component: string;
      os: string;
      runsOn: string[];
      credential: string;
      requests: string[];
      by: Set<string>;
      denied: number;
      sources: Set<string>;
    }
  >();
  for (const r of auditRows(result)) {
    const key = [r.component, r.os, r.credential].join('|');
    const row = rows.get(key) ?? {
      component: r.component,
      os: r.os,
      runsOn: [],
      credential: r.credential,
      requests: [],
      by: new Set<string>(),
      denied: 0,
      sources: new Set<string>(),
    };
    for (const n of r.runsOn) if (!row.runsOn.includes(n)) row.runsOn.push(n);
    row.requests.push(r.request);
    row.by.add(r.decision.replace(/^(allowed|DENIED): /, '').replace(/ via .*/, ''));
    if (r.decision.startsWith('DENIED')) row.denied += 1;
    row.sources.add(r.source.replace(/ \(.*$/, '').replace(/:[\d,]+$/, ''));
    rows.set(key, row);
  }
  const head =
    '| component | OS | runs on | credential | requests | decided by | upstream source |\n|---|---|---|---|---|---|---|\n';
  return (
    head +
    [...rows.values()]
      .map(
        (r) =>
          `| ${[
            r.component,
            r.os,
            r.runsOn.join(', '),
            r.credential,
            r.requests.join('; '),
            `${r.denied === 0 ? 'all allowed' : `${r.denied} DENIED`}: ${[...r.by].join('; ')}`,
            [...r.sources].join('; '),
          ]
            .map(cell)
            .join(' | ')} |`,
      )
      .join('\n') +
    '\n'
  );
}
