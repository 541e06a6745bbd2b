// `kubemix plan --audit`: the authorization audit, the traffic audit and the
// credential-lifetime audit of one plan, as one report. The JSON document
// keeps the authorization audit's fields at its top level (components,
// findings, ok: what tools already read) and adds `traffic` and
// `credentials`, each with its own `ok`. Pure.
import type { ClusterModel } from '../model/resolve.js';
import { auditPlan, type AuditOptions } from './audit.js';
import type { AuditInput } from './components.js';
import { auditText } from './format.js';
import { auditTraffic, trafficText, type TrafficResult } from './traffic.js';
import { auditCredentials, credentialsText, type CredentialResult } from './credentials.js';
import type { AuditResult } from './types.js';

export interface PlanAudit {
  readonly authorization: AuditResult;
  readonly traffic: TrafficResult;
  readonly credentials: CredentialResult;
}

export function auditAll(model: ClusterModel, input: AuditInput, options: AuditOptions = {}): PlanAudit {
  return {
    authorization: auditPlan(input, options),
    traffic: auditTraffic(model, input),
    credentials: auditCredentials(input),
  };
}

/** The JSON document: the authorization audit's own fields, then the other audits. */
export function planAuditDocument(a: PlanAudit): Record<string, unknown> {
  return { ...a.authorization, traffic: a.traffic, credentials: a.credentials };
}

export function planAuditText(a: PlanAudit): string {
  return `${auditText(a.authorization)}\n${trafficText(a.traffic)}\n${credentialsText(a.credentials)}`;
}

/** One line per audit that failed, naming how many problems it found; empty when all passed. */
export function planAuditProblems(a: PlanAudit): string[] {
  const out: string[] = [];
  const authz = a.authorization.findings.filter((f) => f.severity === 'error').length;
  if (!a.authorization.ok) out.push(`the authorization audit found ${authz} problem(s)`);
  const dropped = a.traffic.decisions.filter((d) => !d.allowed).length;
  if (!a.traffic.ok) out.push(`the traffic audit found ${dropped} flow(s) the firewall drops`);
  const lives = a.credentials.findings.filter((f) => f.severity === 'error').length;
  if (!a.credentials.ok) out.push(`the credential audit found ${lives} problem(s)`);
  return out;
}
