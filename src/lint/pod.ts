// Reading the parts of a pod spec the rules look at: its containers and
// whether they are Windows HostProcess containers.
import { asArray, asMap, asString, type JsonMap, type NodePath } from './values.js';

export interface ContainerRef {
  readonly name: string;
  readonly image: string | undefined;
  readonly value: JsonMap;
  /** Path from the pod spec, e.g. `['containers', 0]`. */
  readonly path: NodePath;
}

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

export function containersOf(spec: JsonMap): ContainerRef[] {
  const out: ContainerRef[] = [];
  for (const list of CONTAINER_LISTS) {
    asArray(spec[list]).forEach((item, index) => {
      const value = asMap(item);
      if (value === undefined) return;
      out.push({
        name: asString(value['name']) ?? `${list}[${index}]`,
        image: asString(value['image']),
        value,
        path: [list, index],
      });
    });
  }
  return out;
}

function hostProcessFlag(securityContext: unknown): boolean | undefined {
  const flag = asMap(asMap(securityContext)?.['windowsOptions'])?.['hostProcess'];
  return typeof flag === 'boolean' ? flag : undefined;
}

/** Pod-level `securityContext.windowsOptions.hostProcess`, when set. */
export function podHostProcess(spec: JsonMap): boolean | undefined {
  return hostProcessFlag(spec['securityContext']);
}

/** A container is HostProcess by its own flag, else by the pod's. */
export function isHostProcess(spec: JsonMap, container: ContainerRef): boolean {
  return hostProcessFlag(container.value['securityContext']) ?? podHostProcess(spec) ?? false;
}

export function anyHostProcess(spec: JsonMap, containers: readonly ContainerRef[]): boolean {
  return podHostProcess(spec) === true || containers.some((c) => isHostProcess(spec, c));
}

/** `windowsOptions.runAsUserName` of a container, falling back to the pod's. */
export function runAsUserName(spec: JsonMap, container: ContainerRef): { value: string; path: NodePath } | undefined {
  const own = asString(asMap(asMap(container.value['securityContext'])?.['windowsOptions'])?.['runAsUserName']);
  if (own !== undefined)
    return { value: own, path: [...container.path, 'securityContext', 'windowsOptions', 'runAsUserName'] };
  const pod = asString(asMap(asMap(spec['securityContext'])?.['windowsOptions'])?.['runAsUserName']);
  return pod === undefined ? undefined : { value: pod, path: ['securityContext', 'windowsOptions', 'runAsUserName'] };
}
