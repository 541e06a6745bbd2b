// The fields of Kubernetes objects layer 2 reads, in the shape
// @kubernetes/client-node hands them over (camelCase, as in the API's JSON).
// Structural, so the judges stay pure and tests can build them by hand.

export interface Meta {
  readonly name?: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly deletionTimestamp?: unknown;
  readonly resourceVersion?: string;
  readonly ownerReferences?: readonly { readonly kind?: string; readonly name?: string }[];
}

export interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

export interface NodeObject {
  readonly metadata?: Meta;
  readonly spec?: { readonly taints?: readonly { key?: string; value?: string; effect?: string }[] };
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly addresses?: readonly { readonly type?: string; readonly address?: string }[];
    readonly nodeInfo?: {
      readonly kubeletVersion?: string;
      readonly operatingSystem?: string;
      readonly architecture?: string;
    };
  };
}

export interface ContainerState {
  readonly waiting?: { readonly reason?: string; readonly message?: string };
  readonly terminated?: { readonly exitCode?: number; readonly reason?: string; readonly message?: string };
  readonly running?: unknown;
}

export interface PodObject {
  readonly metadata?: Meta;
  readonly spec?: { readonly nodeName?: string };
  readonly status?: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly reason?: string;
    readonly message?: string;
    readonly conditions?: readonly Condition[];
    readonly containerStatuses?: readonly { readonly ready?: boolean; readonly state?: ContainerState }[];
  };
}

export interface NamespaceObject {
  readonly metadata?: Meta;
  readonly spec?: { readonly finalizers?: readonly string[] };
  readonly status?: { readonly phase?: string; readonly conditions?: readonly Condition[] };
}

export interface NamedObject {
  readonly metadata?: Meta;
}

export function nameOf(o: { readonly metadata?: Meta }): string {
  return o.metadata?.name ?? '';
}

export function podReady(p: PodObject): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Why a pod is not Ready, in a few words: its phase and the first container's waiting/terminated reason. */
export function podState(p: PodObject): string {
  const phase = p.status?.phase ?? 'Unknown';
  const c = p.status?.containerStatuses?.[0]?.state;
  const why = c?.waiting?.reason ?? c?.terminated?.reason ?? p.status?.reason;
  const msg = c?.waiting?.message ?? p.status?.message;
  return [phase, why, msg].filter((x) => x !== undefined && x !== '').join(': ');
}
