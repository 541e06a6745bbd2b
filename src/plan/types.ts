// The Plan contract: what `kubemix plan --out DIR` writes to plan.json and
// what the executor (`kubemix up`) runs. Pure data, JSON-serialisable, stable.
//
// Secrets never appear in a plan: commands and artifact contents refer to
// them as `{{secret:NAME}}`; the executor fills them in at run time and passes
// them only through stdin or 0600 files, never on a remote command line.

import type { ResolvedDownload } from '../model/downloads.js';
import type { ClusterImage } from '../model/images.js';
import type { HostConnection, PlanCluster, PlanNode, Privilege, Shell } from '../model/types.js';

export const PLAN_API_VERSION = 'kubemix.dev/v1alpha1' as const;

/** Kubeinit's stage names, in run order. */
export const STAGES = [
  'task-gather-facts',
  'task-prepare-hypervisors',
  'task-prepare-environment',
  'task-cleanup-hypervisors',
  'task-run-validations',
  'task-create-network',
  'task-create-services',
  'task-prepare-cluster',
  'task-download-images',
  'task-deploy-cluster',
  'task-post-deployment',
] as const;
export type Stage = (typeof STAGES)[number];

/** A command the executor runs on a task's host, in the given shell. */
export interface Command {
  readonly shell: Shell;
  readonly privilege: Privilege;
  /** Script text. May contain `{{secret:NAME}}`; the executor feeds it on stdin. */
  readonly script: string;
}

/** An artifact to place on the host before `apply` runs. */
export interface Upload {
  /** Index into `Plan.artifacts`, by its stable id (`<node>:<remote path>`). */
  readonly artifact: string;
}

export interface Task {
  /** `<stage>/<host>/<name>`, unique within a plan. */
  readonly id: string;
  /** Node or hypervisor name the task runs on; `local` for the machine running kubemix. */
  readonly host: string;
  readonly stage: Stage;
  /** Short, human name (`containerd-config`). */
  readonly name: string;
  /** One line saying what the task achieves. */
  readonly description: string;
  /** Ids of tasks that must be done first; never in a later stage. */
  readonly after: readonly string[];
  /**
   * Exits 0 when the host already is in the wanted state (apply is skipped).
   * `null`: always apply (read-only tasks such as fact gathering).
   */
  readonly check: Command | null;
  readonly apply: Command;
  readonly uploads: readonly Upload[];
  /** Names of secrets the task's commands or uploads refer to. */
  readonly secrets: readonly string[];
  readonly timeoutSeconds: number;
  /**
   * Secrets this task produces on its host (executor extension, optional).
   * After `apply` succeeds — or when `check` passes but the secret store
   * lacks the value — the executor reads each `remotePath` (with the task's
   * apply privilege, through the encrypted session, never a command line),
   * trims it and stores it under `name` in the 0600 secret store. Later tasks
   * use it as `{{secret:NAME}}` and must list this task in `after`.
   * Example: kubeadm init writes the CA cert hash to
   * /etc/kubemix/secrets/ca-cert-hash (0600), captured as `ca-cert-hash`.
   */
  readonly captures?: readonly SecretCapture[];
  /**
   * The apply reboots the host (executor extension, optional; needs a check).
   * After apply the executor reconnects until the check passes on the
   * rebooted host, within `timeoutSeconds`; connection failures meanwhile are
   * expected. The check must fail until the reboot is over (e.g. Windows'
   * RebootPending key) so the next task never runs on a host going down.
   */
  readonly reboots?: true;
  /**
   * Download cache this task keeps on its host (executor extension,
   * optional): before `check`, the executor makes sure `<dir>/<sha256>` holds
   * each listed download (ids of `Plan.downloads`), uploading from its own
   * verified cache only the files whose content on the host differs.
   */
  readonly serves?: { readonly dir: string; readonly downloads: readonly string[] };
  /**
   * The uploads hold secrets the apply consumes and deletes (executor
   * extension, optional; needs a check): they are placed only when the
   * check fails, and their absence on the host does not make the task run.
   */
  readonly uploadsOnApply?: true;
  /**
   * The services registry this task keeps filled (executor extension,
   * optional): before `check`, the executor pushes what `up --images` was
   * given into `registry` (`host:port`, reached through an SSH tunnel to the
   * task's host, port on its loopback), each image under
   * `<registry>/<upstream registry>/<path>`, blobs already there skipped.
   */
  readonly pushesImages?: { readonly registry: string; readonly port: number };
}

export interface SecretCapture {
  readonly name: string;
  /** File on the task's host holding the value (0600, written by `apply`). */
  readonly remotePath: string;
}

export interface Artifact {
  /** `<node>:<remote path>`, unique within a plan. */
  readonly id: string;
  readonly node: string;
  /** Absolute path on the host (`/etc/containerd/config.toml`, `C:\k\x`). */
  readonly remotePath: string;
  /** Where the file lies under the plan directory (`artifacts/<node>/...`). */
  readonly localPath: string;
  /** Octal file mode as a string (`0644`); Windows artifacts use ACLs instead. */
  readonly mode: string;
  readonly owner: string;
  readonly sha256: string;
}

export interface Plan {
  readonly apiVersion: typeof PLAN_API_VERSION;
  readonly kind: 'Plan';
  /** sha256 of plan.json's text without the line of this field (plan/hash.ts). */
  readonly hash: string;
  readonly cluster: PlanCluster;
  readonly hosts: readonly HostConnection[];
  readonly nodes: readonly PlanNode[];
  readonly artifacts: readonly Artifact[];
  readonly tasks: readonly Task[];
  /**
   * Every file the tasks' scripts name as `{{sha256:ID}}`: where the
   * deployer fetches it and how its hash is known. The executor fills each
   * reference with the verified SHA256 from its content-addressed cache.
   */
  readonly downloads?: readonly ResolvedDownload[];
  /** Air-gapped plans: every image the nodes pull from the services registry (`up --images` brings them). */
  readonly images?: readonly ClusterImage[];
  readonly warnings: readonly { readonly code: string; readonly path: string; readonly message: string }[];
}
