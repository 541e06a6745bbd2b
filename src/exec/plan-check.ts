// Structural validation of a Plan before anything touches a host: a schema
// for the shape, then named rules across fields (unique ids, known hosts and
// artifacts, dependencies that exist, point backwards in stage order, and
// form no cycle). Every problem is collected, not only the first.
import { z } from 'zod';
import { PLAN_API_VERSION, STAGES, type Plan } from '../plan/types.js';
import type { Diagnostic } from '../errors.js';

const command = z.object({
  shell: z.enum(['sh', 'powershell']),
  privilege: z.enum(['root', 'user']),
  script: z.string(),
});
const endpoint = {
  address: z.string().min(1),
  port: z.number().int().min(1).max(65535),
  user: z.string().min(1),
  identityFile: z.string().optional(),
};

export const planSchema = z.object({
  apiVersion: z.literal(PLAN_API_VERSION),
  kind: z.literal('Plan'),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  cluster: z.object({ name: z.string().min(1) }).passthrough(),
  hosts: z.array(
    z.object({
      name: z.string().min(1),
      ...endpoint,
      bastion: z.object(endpoint).optional(),
      shell: z.enum(['sh', 'powershell']),
      provisioner: z.enum(['kubemix', 'user']),
    }),
  ),
  nodes: z.array(z.unknown()),
  artifacts: z.array(
    z.object({
      id: z.string(),
      node: z.string(),
      remotePath: z.string(),
      localPath: z.string(),
      mode: z.string(),
      owner: z.string(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
  tasks: z.array(
    z.object({
      id: z.string().min(1),
      host: z.string().min(1),
      stage: z.enum(STAGES),
      name: z.string(),
      description: z.string(),
      after: z.array(z.string()),
      check: command.nullable(),
      apply: command,
      uploads: z.array(z.object({ artifact: z.string() })),
      secrets: z.array(z.string()),
      timeoutSeconds: z.number().positive(),
      captures: z.array(z.object({ name: z.string().min(1), remotePath: z.string().min(1) })).optional(),
      reboots: z.literal(true).optional(),
      serves: z.object({ dir: z.string().min(1), downloads: z.array(z.string()) }).optional(),
      uploadsOnApply: z.literal(true).optional(),
      pushesImages: z.object({ registry: z.string().min(1), port: z.number().int().min(1).max(65535) }).optional(),
    }),
  ),
  downloads: z
    .array(
      z.object({
        id: z.string().min(1),
        name: z.string().min(1),
        version: z.string(),
        url: z.string().min(1),
        sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .optional(),
        checksumUrl: z.string().min(1).optional(),
        hashFrom: z.enum(['spec', 'matrix', 'published']),
      }),
    )
    .optional(),
  images: z
    .array(
      z.object({
        ref: z.string().min(1),
        registry: z.string().min(1),
        repository: z.string().min(1),
        tag: z.string().optional(),
        digest: z
          .string()
          .regex(/^sha256:[0-9a-f]{64}$/)
          .optional(),
        platforms: z.array(z.string()),
        usedBy: z.array(z.string()),
      }),
    )
    .optional(),
  warnings: z.array(z.unknown()),
});

function problem(path: string, message: string, code = 'plan.invalid'): Diagnostic {
  return { code, severity: 'error', path, message };
}

export function checkPlanRules(plan: Plan): Diagnostic[] {
  const out: Diagnostic[] = [];
  const hosts = new Set(plan.hosts.map((h) => h.name));
  const artifacts = new Set(plan.artifacts.map((a) => a.id));
  const tasks = new Map(plan.tasks.map((t) => [t.id, t]));
  if (tasks.size !== plan.tasks.length) out.push(problem('tasks', 'task ids are not unique'));
  plan.tasks.forEach((t, i) => {
    const where = `tasks[${i}] (${t.id})`;
    if (t.host !== 'local' && !hosts.has(t.host)) out.push(problem(`${where}.host`, `unknown host ${t.host}`));
    for (const u of t.uploads)
      if (!artifacts.has(u.artifact)) out.push(problem(`${where}.uploads`, `unknown artifact ${u.artifact}`));
    for (const d of t.after) {
      const dep = tasks.get(d);
      if (!dep) out.push(problem(`${where}.after`, `unknown task ${d}`));
      else if (STAGES.indexOf(dep.stage) > STAGES.indexOf(t.stage))
        out.push(problem(`${where}.after`, `${d} is in a later stage (${dep.stage})`));
    }
    if (t.uploadsOnApply === true && t.check === null)
      out.push(problem(`${where}.check`, 'a task whose apply consumes its uploads needs a check'));
    // Only the check can tell a host that came back from one still going down.
    if (t.reboots === true && t.check === null)
      out.push(
        problem(`${where}.check`, 'a task that reboots its host needs a check that passes once the reboot is over'),
      );
  });
  const downloads = new Set((plan.downloads ?? []).map((d) => d.id));
  (plan.downloads ?? []).forEach((d, i) => {
    if (d.sha256 === undefined && d.checksumUrl === undefined)
      out.push(
        problem(`downloads[${i}] (${d.id})`, 'no SHA256 and no published checksum: the file could never be verified'),
      );
  });
  plan.tasks.forEach((t, i) => {
    for (const id of t.serves?.downloads ?? [])
      if (!downloads.has(id)) out.push(problem(`tasks[${i}] (${t.id}).serves`, `unknown download ${id}`));
  });
  const cycle = findCycle(plan);
  if (cycle) out.push(problem('tasks', `dependency cycle: ${cycle.join(' → ')}`, 'plan.cycle'));
  return out;
}

/** A dependency cycle, printed whole, or undefined. Depth-first without recursion: a plan file may hold a chain of any length. */
export function findCycle(plan: Pick<Plan, 'tasks'>): string[] | undefined {
  const after = new Map(plan.tasks.map((t) => [t.id, t.after]));
  const mark = new Map<string, 1 | 2>();
  for (const root of after.keys()) {
    if (mark.has(root)) continue;
    const path: string[] = [root];
    const next: number[] = [0];
    mark.set(root, 1);
    while (path.length > 0) {
      const top = path.length - 1;
      const id = path[top] as string;
      const deps = after.get(id) ?? [];
      const at = next[top] as number;
      if (at === deps.length) {
        mark.set(id, 2);
        path.pop();
        next.pop();
        continue;
      }
      next[top] = at + 1;
      const dep = deps[at] as string;
      if (!after.has(dep) || mark.get(dep) === 2) continue;
      if (mark.get(dep) === 1) return [...path.slice(path.indexOf(dep)), dep];
      mark.set(dep, 1);
      path.push(dep);
      next.push(0);
    }
  }
  return undefined;
}
