// The authorization audit (see audit.ts).
export { auditPlan, credentialLabel, requestText, type AuditOptions } from './audit.js';
export { auditMarkdown, auditRows, auditSummaryMarkdown, auditText } from './format.js';
export type { AuditResult, Component, Credential, NeededRequest } from './types.js';
export { guardAudit } from './guard.js';
