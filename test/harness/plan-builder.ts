// Small synthetic plans for executor tests: tasks that record every apply
// and check in per-host files so tests can count them.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { HostConnection } from '../../src/model/types.js';
import { PLAN_API_VERSION, type Artifact, type Plan, type Stage, type Task } from '../../src/plan/types.js';
import { sha256 } from '../../src/exec/hash.js';
import { withPlanHash } from '../../src/plan/hash.js';

export interface TaskInput {
  readonly host: string;
  readonly name: string;
  readonly stage?: Stage;
  readonly after?: readonly string[];
  readonly apply: string;
  readonly check?: string | null;
  readonly uploads?: readonly string[];
  readonly secrets?: readonly string[];
  readonly captures?: Task['captures'];
  readonly timeoutSeconds?: number;
  /** The apply reboots the host (Task.reboots). */
  readonly reboots?: true;
  /** The apply consumes its uploads (Task.uploadsOnApply). */
  readonly uploadsOnApply?: true;
  /** Default root (sudo for a non-root login). */
  readonly privilege?: 'root' | 'user';
}

export interface FileInput {
  readonly node: string;
  readonly remotePath: string;
  readonly content: string;
  readonly mode?: string;
}

export interface BuiltPlan {
  readonly plan: Plan;
  readonly contents: Map<string, Buffer>;
}

export function taskId(t: {
  readonly host: string;
  readonly name: string;
  readonly stage?: Stage | undefined;
}): string {
  return `${t.stage ?? 'task-prepare-cluster'}/${t.host}/${t.name}`;
}

export function buildPlan(
  hosts: readonly HostConnection[],
  tasks: readonly TaskInput[],
  files: readonly FileInput[] = [],
  cluster = 'testcluster',
): BuiltPlan {
  const contents = new Map<string, Buffer>();
  const artifacts: Artifact[] = files.map((f) => {
    const id = `${f.node}:${f.remotePath}`;
    contents.set(id, Buffer.from(f.content));
    return {
      id,
      node: f.node,
      remotePath: f.remotePath,
      localPath: join('artifacts', f.node, f.remotePath),
      mode: f.mode ?? '0644',
      owner: '',
      sha256: sha256(f.content),
    };
  });
  const planTasks: Task[] = tasks.map((t) => ({
    id: taskId(t),
    host: t.host,
    stage: t.stage ?? 'task-prepare-cluster',
    name: t.name,
    description: `test task ${t.name}`,
    after: t.after ?? [],
    check: t.check === null ? null : { shell: 'sh', privilege: t.privilege ?? 'root', script: t.check ?? 'exit 1' },
    apply: { shell: 'sh', privilege: t.privilege ?? 'root', script: t.apply },
    uploads: (t.uploads ?? []).map((artifact) => ({ artifact })),
    secrets: t.secrets ?? [],
    timeoutSeconds: t.timeoutSeconds ?? 30,
    ...(t.captures === undefined ? {} : { captures: t.captures }),
    ...(t.reboots === undefined ? {} : { reboots: t.reboots }),
    ...(t.uploadsOnApply === undefined ? {} : { uploadsOnApply: t.uploadsOnApply }),
  }));
  const body: Omit<Plan, 'hash'> = {
    apiVersion: PLAN_API_VERSION,
    kind: 'Plan' as const,
    cluster: {
      name: cluster,
      domain: 'test.local',
      driver: 'existing' as const,
      versions: {},
      network: {
        nodeCidr: '198.51.100.0/24',
        gateway: '198.51.100.1',
        podCidr: '10.244.0.0/16',
        serviceCidr: '10.96.0.0/12',
        nodeMtu: 1500,
        podMtu: 1450,
      },
      cni: { plugin: 'flannel' as const, backend: 'vxlan' as const, vni: 4096, port: 4789 },
      apiEndpoint: { host: 'api', port: 6443, address: '198.51.100.2' },
    },
    hosts,
    nodes: [],
    artifacts,
    tasks: planTasks,
    warnings: [],
  };
  return { plan: withPlanHash(body), contents };
}

/** Writes DIR/plan.json and DIR/artifacts/... as `kubemix plan --out DIR` would. */
export async function writePlanDir(dir: string, built: BuiltPlan): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'plan.json'), `${JSON.stringify(built.plan, null, 2)}\n`);
  for (const a of built.plan.artifacts) {
    const file = join(dir, a.localPath);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, built.contents.get(a.id) ?? '');
  }
}

/** A task that appends its name to <dir>/apply.log once applied and is checked by a marker file. */
export function countedTask(host: string, dir: string, name: string, extra: Partial<TaskInput> = {}): TaskInput {
  return {
    host,
    name,
    check: `echo ${name} >> ${dir}/check.log; test -f ${dir}/${name}.done`,
    apply: `echo ${name} >> ${dir}/apply.log; touch ${dir}/${name}.done`,
    ...extra,
  };
}
