// The authorization audit (see audit.ts).
export { auditPlan, credentialLabel, requestText, type AuditOptions } from './audit.js';
export { auditMarkdown, auditRows, auditSummaryMarkdown, auditText } from './format.js';
export type { AuditResult, Component, Credential, NeededRequest } from './types.js';
export { guardAudit } from './guard.js';
export { auditAll, planAuditDocument, planAuditProblems, planAuditText, type PlanAudit } from './report.js';
export { auditTraffic, trafficText, type TrafficDecision, type TrafficResult } from './traffic.js';
export type { Flow } from './flows.js';
export type { NodeFirewall, RuleFact } from './firewall.js';
export { auditCredentials, credentialsText, type CredentialLife, type CredentialResult } from './credentials.js';
