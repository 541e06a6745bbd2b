// The JSON report: one document, findings in the same order as the text.
import { ExitCode } from '../../errors.js';
import type { Finding } from '../findings.js';
import { exitCodeOf, summarize } from '../findings.js';
import type { Rule } from '../rules/types.js';

export interface ReportMeta {
  readonly files: number;
  readonly templates: number;
  readonly strict: boolean;
}

export function jsonReport(findings: readonly Finding[], meta: ReportMeta): Record<string, unknown> {
  const s = summarize(findings);
  return {
    ok: exitCodeOf(findings, meta.strict) === ExitCode.ok,
    summary: {
      files: meta.files,
      templates: meta.templates,
      errors: s.errors,
      warnings: s.warnings,
      unparseable: s.unparseable,
    },
    findings,
  };
}

export function rulesJson(rules: readonly Rule[]): Record<string, unknown>[] {
  return rules.map((r) => ({
    id: r.id,
    severity: r.severity,
    why: r.why,
    hint: r.hint,
    needsCluster: r.needsCluster,
    fixable: r.fixable,
  }));
}
