// The driver interface: what an infrastructure driver decides for a plan.
// Two drivers implement it: `existing` (hosts the user already runs) and
// `libvirt` (VMs kubemix creates on hypervisors). spec/, model/, plan/,
// render/ and interop/ ask the driver instead of testing its name.
//
// Drivers sit below the core: they import only util/, net/, matrix/ and
// errors, and describe their inputs structurally (a ClusterSpec, a
// ClusterModel and a PlanNode satisfy these shapes), so the core may import
// them without a two-way dependency. Everything here is pure; the tasks a
// driver contributes run through the executor like every other task.

import type { InstallMediaPlace } from './install-media.js';

export type DriverName = 'existing' | 'libvirt';

/** An SSH endpoint as the spec gives it. */
export interface DriverSshTarget {
  readonly address: string;
  readonly port: number;
  readonly user: string;
  readonly identityFile?: string | undefined;
  readonly bastion?:
    | {
        readonly address: string;
        readonly port: number;
        readonly user: string;
        readonly identityFile?: string | undefined;
      }
    | undefined;
}

/** The parts of a normalised spec a driver reads. */
export interface DriverSpec {
  readonly hypervisors: readonly (DriverSshTarget & {
    readonly name: string;
    readonly libvirtUri: string;
    readonly domainType: 'auto' | 'kvm' | 'qemu';
  })[];
  readonly hosts: readonly (DriverSshTarget & { readonly name: string; readonly os: string })[];
}

/** A node as the driver sees it (a PlanNode has these fields). */
export interface DriverNode {
  readonly name: string;
  readonly fqdn: string;
  readonly role: 'control-plane' | 'worker' | 'services';
  readonly os: string;
  readonly osFamily: 'linux' | 'windows';
  readonly ip: string;
  readonly mac?: string;
  readonly hypervisor?: string;
  readonly resources?: { readonly vcpus: number; readonly ramMiB: number; readonly diskGiB: number };
}

export interface DriverHypervisor {
  readonly name: string;
  readonly address: string;
  readonly libvirtUri: string;
  readonly domainType: 'auto' | 'kvm' | 'qemu';
}

/** The parts of a resolved model a driver reads. */
export interface DriverModel {
  /** Download pins and the artifact mirror (cloud images). */
  readonly spec: {
    readonly downloads: Readonly<
      Record<string, { readonly url?: string | undefined; readonly sha256?: string | undefined }>
    >;
    readonly mirrors: { readonly artifacts?: string | undefined };
  };
  readonly cluster: {
    readonly name: string;
    readonly domain: string;
    readonly network: { readonly nodeCidr: string; readonly gateway: string; readonly nodeMtu: number };
  };
  readonly nodes: readonly DriverNode[];
  readonly hypervisors: readonly DriverHypervisor[];
}

/** A connection the plan carries (structurally model/types.ts HostConnection). */
export interface DriverHost {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly user: string;
  readonly identityFile?: string;
  readonly bastion?: {
    readonly address: string;
    readonly port: number;
    readonly user: string;
    readonly identityFile?: string;
  };
  readonly shell: 'sh' | 'powershell';
  readonly provisioner: 'kubemix' | 'user';
}

/** The stages a driver contributes to (a subset of plan/types.ts STAGES). */
export type DriverStage =
  'task-prepare-hypervisors' | 'task-cleanup-hypervisors' | 'task-run-validations' | 'task-create-network';

/** Another task, by stage, host and name (plan/ turns it into an id). */
export interface TaskRef {
  readonly stage: string;
  readonly host: string;
  readonly name: string;
}

export interface DriverCommand {
  readonly shell: 'sh' | 'powershell';
  readonly privilege: 'root' | 'user';
  readonly script: string;
}

/** A task a driver contributes; plan/ gives it its id and sorts it in. */
export interface DriverTask {
  readonly stage: DriverStage;
  readonly host: string;
  readonly name: string;
  readonly description: string;
  readonly after: readonly TaskRef[];
  readonly check: DriverCommand | null;
  readonly apply: DriverCommand;
  readonly secrets?: readonly string[];
  /** Artifacts (by remote path on this task's host) to place before apply. */
  readonly uploads?: readonly string[];
  /** The apply consumes and deletes its uploads (secrets): placed only when the check fails. */
  readonly uploadsOnApply?: true;
  readonly timeoutSeconds: number;
}

/** A file a driver renders for one host (structurally render/types.ts RenderedArtifact). */
export interface DriverArtifact {
  readonly node: string;
  readonly remotePath: string;
  readonly mode: string;
  readonly owner: string;
  readonly content: string;
}

/** A column of the topology diagram: a machine that holds nodes. */
export interface DriverPlacement {
  readonly name: string;
  readonly address?: string;
  readonly nodes: readonly string[];
}

/** What validating a spec asks of a driver (values in traits.ts, loaded without the driver). */
export interface DriverTraits {
  readonly name: DriverName;
  /**
   * The machines are the driver's own: it picks node addresses and MACs
   * from the node network, makes the node list from the spec's node groups,
   * and installs their operating systems (Windows from install media). An
   * existing-hosts driver takes the list, addresses and MACs as written.
   */
  readonly createsMachines: boolean;
  /** Spec path of the field that sets the control-plane nodes (messages). */
  readonly controlPlanePath: string;
  /**
   * The node network between the driver's hosts is an encapsulating overlay
   * (so the node MTU is lowered by its header).
   */
  nodeNetworkIsOverlay(spec: DriverSpec): boolean;
}

export interface Driver extends DriverTraits {
  /** The connections the plan carries: hypervisors and guests, or the listed hosts. */
  hosts(spec: DriverSpec, nodes: readonly DriverNode[]): DriverHost[];
  /** The hypervisors the model lists (none for existing hosts). */
  hypervisors(spec: DriverSpec): DriverHypervisor[];
  /** Tasks per stage (prepare-hypervisors, cleanup, validations, create-network). */
  tasks(model: DriverModel): DriverTask[];
  /**
   * The tasks `kubemix down` runs for the machines the driver made: remove
   * them and what holds them (none for existing hosts, which stay).
   */
  downTasks(model: DriverModel): DriverTask[];
  /** Files those tasks upload (rendered XML, seeds). */
  artifacts(model: DriverModel): DriverArtifact[];
  /**
   * Where a Windows VM's install media files (install-media.ts) are placed
   * for the driver to build its media from; undefined for machines the
   * driver does not install.
   */
  installMedia(node: DriverNode, model: DriverModel): InstallMediaPlace | undefined;
  /** What a node's first own task waits for (its host was checked, or its VM answers). */
  nodeReady(node: DriverNode, model: DriverModel): TaskRef[];
  /** Where the nodes run, for diagrams. */
  placements(model: DriverModel): DriverPlacement[];
}
