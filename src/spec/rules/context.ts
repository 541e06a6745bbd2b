import type { Diagnostic } from '../../errors.js';
import type { ClusterSpecParsed } from '../schema.js';
import type { NodeDraft } from '../nodes.js';
import type { ClusterSpec } from '../types.js';

export interface RuleContext {
  /** The document as written, before defaults (to tell set fields from defaulted ones). */
  readonly document: Record<string, unknown>;
  readonly parsed: ClusterSpecParsed;
  readonly spec: ClusterSpec;
  readonly nodes: readonly NodeDraft[];
}

/** A named cross-field rule: returns every problem it finds. */
export type Rule = (ctx: RuleContext) => Diagnostic[];

export function error(code: string, path: string, message: string, hint?: string): Diagnostic {
  return { code, severity: 'error', path, message, ...(hint === undefined ? {} : { hint }) };
}

export function warning(code: string, path: string, message: string, hint?: string): Diagnostic {
  return { code, severity: 'warning', path, message, ...(hint === undefined ? {} : { hint }) };
}

export function hasWindows(ctx: RuleContext): boolean {
  return ctx.nodes.some((n) => n.os.startsWith('windows'));
}
