import type { Command } from 'commander';
import { resolveModel } from '../../model/resolve.js';
import { auditAll, guardAudit, planAuditDocument, planAuditProblems, planAuditText } from '../../audit/index.js';
import { FindingsError } from '../../errors.js';
import { assemblePlan, assemblePlanBodyTo } from '../../plan/assemble.js';
import type { CliIo } from '../io.js';
import { checkPlanOut, writePlanDirFrom } from '../plan-dir.js';
import { renderPlanText } from '../render-plan.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

export function registerPlan(program: Command, io: CliIo): void {
  withSpecOptions(
    program
      .command('plan')
      .description('show what would be deployed, and write plan.json + artifacts with --out')
      .argument('<SPEC>', 'spec file, or Kubeinit spec string such as k8s-libvirt-1-1-1')
      .option(
        '--out <DIR>',
        'replace DIR atomically with plan.json and artifacts/ (a new, empty or earlier plan directory)',
      )
      .option('--force', 'with --out: replace DIR even if it is a non-empty directory kubemix did not write')
      .option(
        '--audit',
        "instead of the plan, the audits: each component's credential and API requests (authorization), every flow each node's firewall must let in (traffic); exit 1 on a problem",
      ),
  ).action((spec: string, opts: SpecOptions & { out?: string; force?: boolean; audit?: boolean }, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, opts, io);
    const keep = [io.cwd, ...(loaded.file === undefined ? [] : [loaded.file])];
    const dir =
      opts.out === undefined ? undefined : checkPlanOut(opts.out, io.cwd, { force: opts.force === true, keep });
    const model = resolveModel(loaded);
    // The audit reads the artifacts' texts; a plan directory alone takes each as it is made.
    const assembled = dir === undefined || opts.audit === true ? assemblePlan(model) : undefined;
    let plan = assembled?.plan;
    if (dir !== undefined)
      plan = writePlanDirFrom(dir, (sink) => {
        if (assembled === undefined) return assemblePlanBodyTo(model, sink);
        assembled.files.forEach(sink);
        return assembled.plan;
      });
    if (plan === undefined) throw new Error('plan: neither assembled nor written');
    // The guard webhook (kubemix guard install, default namespace, reading pull secrets) is audited beside the plan.
    const audit =
      assembled !== undefined && opts.audit === true
        ? auditAll(model, assembled, { extra: guardAudit('kubemix-guard', true) })
        : undefined;
    if (audit !== undefined) {
      if (out.json) out.document(planAuditDocument(audit));
      else out.text(planAuditText(audit));
    } else if (out.json) out.document(plan);
    else out.text(renderPlanText(plan));
    for (const w of loaded.warnings) out.diagnostic(w);
    for (const w of plan.warnings.filter(
      (pw) => !loaded.warnings.some((lw) => lw.code === pw.code && lw.path === pw.path),
    )) {
      out.diagnostic({ ...w, severity: 'warning' });
    }
    if (opts.out !== undefined) out.log('info', `plan written to ${opts.out}`);
    const problems = audit === undefined ? [] : planAuditProblems(audit);
    if (problems.length > 0) throw new FindingsError(problems.join('; '));
  });
}
