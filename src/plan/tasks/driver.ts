// The tasks and files the infrastructure driver contributes (hypervisor
// preparation and cleanup, preflight checks, the node network and VMs),
// turned into plan Tasks and artifacts.
import { driverFor } from '../../drivers/index.js';
import type { DriverTask, TaskRef } from '../../drivers/types.js';
import type { ClusterModel } from '../../model/resolve.js';
import type { RenderedArtifact } from '../../render/types.js';
import { artifactId } from '../artifact-path.js';
import { task, taskId } from '../task.js';
import { underlayValidationTasks } from './underlay-validation.js';
import type { Stage, Task } from '../types.js';

export function refId(ref: TaskRef): string {
  return taskId(ref.stage as Stage, ref.host, ref.name);
}

export function toTask(t: DriverTask): Task {
  return task({
    stage: t.stage,
    host: t.host,
    name: t.name,
    description: t.description,
    after: t.after.map(refId),
    check: t.check,
    apply: t.apply,
    ...(t.secrets === undefined ? {} : { secrets: t.secrets }),
    ...(t.uploads === undefined ? {} : { uploads: t.uploads.map((p) => artifactId(t.host, p)) }),
    timeoutSeconds: t.timeoutSeconds,
    ...(t.uploadsOnApply === undefined ? {} : { uploadsOnApply: t.uploadsOnApply }),
  });
}

/** Every task and artifact of the cluster's driver. */
export function driverContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const driver = driverFor(model.cluster.driver);
  // Machines that exist already can be probed before install; a driver's VMs only once created.
  const underlay = driver.createsMachines ? [] : underlayValidationTasks(model);
  return { tasks: [...driver.tasks(model).map(toTask), ...underlay], artifacts: driver.artifacts(model) };
}

/** The tasks `kubemix down` runs for the driver's machines (none for existing hosts). */
export function driverDownContribution(model: ClusterModel): { tasks: Task[] } {
  return { tasks: driverFor(model.cluster.driver).downTasks(model).map(toTask) };
}

/** What a node's first own task waits for, as task ids. */
export function nodeReadyIds(model: ClusterModel, node: ClusterModel['nodes'][number]): string[] {
  return driverFor(model.cluster.driver).nodeReady(node, model).map(refId);
}
