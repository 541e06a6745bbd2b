// The vocabulary of the authorization audit: who calls the API with which
// credential, and which requests it must be allowed to make. Pure data.

/** One API request a component makes (RBAC's request attributes, plus who the objects belong to). */
export interface ApiRequest {
  readonly verb: string;
  /** API group; '' is the core group. */
  readonly group: string;
  /** Resource, with `/subresource` when there is one (`nodes/status`). */
  readonly resource: string;
  /** Namespace; absent: cluster-scoped, or across all namespaces. */
  readonly namespace?: string;
  /** Object name (also what a `metadata.name=` field selector on list/watch sets); absent: any. */
  readonly name?: string;
  /**
   * Which objects, where the Node authorizer cares: the caller's own Node
   * (get, or list/watch with `metadata.name=<node>`), pods bound to it
   * (`spec.nodeName=<node>`), or objects such a pod references.
   */
  readonly scope?: 'own-node' | 'node-pods' | 'pod-referenced';
}

/** A request with why the component makes it (upstream source file). */
export interface NeededRequest extends ApiRequest {
  readonly source: string;
}

/** An RBAC PolicyRule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}

export type Credential =
  /** The kubelet's client certificate (kubelet.conf): user system:node:<name>, group system:nodes. */
  | { readonly kind: 'node'; readonly node: string; readonly file: string }
  /** A ServiceAccount token: a pod's projected one, or one the control plane minted with TokenRequest. */
  | { readonly kind: 'serviceaccount'; readonly namespace: string; readonly name: string; readonly how: string }
  /** kubeadm's admin.conf on a control-plane node (group kubeadm:cluster-admins → cluster-admin). */
  | { readonly kind: 'admin'; readonly file: string }
  /** A kubeconfig or token the audit cannot trace to anything the plan makes: always a failure. */
  | { readonly kind: 'unknown'; readonly file: string };

export interface Component {
  readonly name: string;
  readonly os: 'linux' | 'windows' | '-';
  /** Node names, or a description (`first controller`). */
  readonly runsOn: string;
  /** Node whose identity `own-node` requests refer to (for node credentials and naming). */
  readonly node?: string;
  readonly credential: Credential;
  /** Where the credential was read from (artifact, manifest, upstream fact). */
  readonly credentialSource: string;
  readonly requests: readonly NeededRequest[];
}

export interface Decision {
  readonly request: NeededRequest;
  readonly allowed: boolean;
  /** `Node authorizer`, `RBAC ClusterRole/x via ClusterRoleBinding/y`, or why it is denied. */
  readonly by: string;
}

export interface Finding {
  readonly severity: 'error' | 'info';
  readonly credential: string;
  readonly message: string;
}

export interface AuditResult {
  readonly components: readonly { readonly component: Component; readonly decisions: readonly Decision[] }[];
  readonly findings: readonly Finding[];
  readonly ok: boolean;
}
