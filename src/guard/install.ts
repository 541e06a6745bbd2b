// The webhook's manifests: Namespace, TLS Secret, cluster spec ConfigMap,
// ServiceAccount with the one permission it needs (get on Secrets, to read
// pods' imagePullSecrets; none with --no-pull-secrets), Deployment (2
// replicas, Linux only, spread over nodes), PodDisruptionBudget, Service and
// the two WebhookConfigurations. Pure: the certificate comes in.
import { VERSION } from '../version.js';

export interface InstallInput {
  readonly namespace: string;
  readonly image: string;
  readonly caBundle: string;
  readonly tls: { readonly cert: string; readonly key: string };
  /** The spec file's text, or undefined when the cluster is a Kubeinit string passed as is. */
  readonly specText: string | undefined;
  readonly specArg: string;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly timeoutSeconds: number;
  /** Read pods' imagePullSecrets (needs get on secrets in every namespace). */
  readonly pullSecrets: boolean;
  /** Passed to guard serve as --insecure-registry. */
  readonly insecureRegistries: readonly string[];
}

export const GUARD_NAME = 'kubemix-guard';
const PORT = 8443;
/** The image's own user and group (gobuild/guard-image.sh: `--user 65532:65532`). */
const GUARD_UID = 65532;
const REPLICAS = 2;
const PROBE_PERIOD_SECONDS = 10;
const PROBE_TIMEOUT_SECONDS = 5;
/** Up to 5 min to start before liveness counts (startupProbe: every 5 s, 60 failures). */
const STARTUP = { periodSeconds: 5, failureThreshold: 60 };

/**
 * How long a rollout of guard's Deployment may take by its own probes: the
 * replicas replaced one at a time (maxSurge 1, maxUnavailable 0 at two
 * replicas), each allowed its whole start-up budget and one readiness round.
 * A fixed 300 s ended the real-cluster tier's run 39 upgrade: on the emulated
 * guests the first new replica was available after about 210 s, and the old
 * one was still terminating at 300 s.
 */
export function guardRolloutSeconds(): number {
  const startup = STARTUP.periodSeconds * STARTUP.failureThreshold;
  return REPLICAS * (startup + PROBE_PERIOD_SECONDS + PROBE_TIMEOUT_SECONDS);
}
const b64 = (s: string): string => Buffer.from(s).toString('base64');

export function serviceDnsNames(namespace: string): string[] {
  return [
    `${GUARD_NAME}.${namespace}.svc`,
    `${GUARD_NAME}.${namespace}.svc.cluster.local`,
    `${GUARD_NAME}.${namespace}`,
  ];
}

export function renderInstall(i: InstallInput): Record<string, unknown>[] {
  const labels = { 'app.kubernetes.io/name': GUARD_NAME, 'app.kubernetes.io/version': VERSION };
  const meta = (name: string) => ({ name, namespace: i.namespace, labels });
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: i.namespace, labels: { ...labels, 'pod-security.kubernetes.io/enforce': 'restricted' } },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(`${GUARD_NAME}-tls`),
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(i.tls.cert), 'tls.key': b64(i.tls.key) },
    },
    ...(i.specText === undefined
      ? []
      : [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: meta(`${GUARD_NAME}-cluster`),
            data: { 'cluster.yaml': i.specText },
          },
        ]),
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: meta(GUARD_NAME),
      automountServiceAccountToken: i.pullSecrets,
    },
    ...(i.pullSecrets ? secretReader(i, labels) : []),
    deployment(i, labels),
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(GUARD_NAME),
      spec: { minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': GUARD_NAME } } },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(GUARD_NAME),
      spec: {
        selector: { 'app.kubernetes.io/name': GUARD_NAME },
        ports: [{ name: 'https', port: 443, targetPort: PORT, protocol: 'TCP' }],
      },
    },
    webhookConfiguration(i, 'MutatingWebhookConfiguration', '/mutate', ['CREATE'], labels),
    webhookConfiguration(i, 'ValidatingWebhookConfiguration', '/validate', ['CREATE', 'UPDATE'], labels),
  ];
}

function deployment(i: InstallInput, labels: Record<string, string>): Record<string, unknown> {
  const select = { 'app.kubernetes.io/name': GUARD_NAME };
  const cluster = i.specText === undefined ? i.specArg : '/etc/kubemix/cluster.yaml';
  // 5 s per answer rather than kubelet's 1 s: a busy node's slow TLS handshake must not fail a healthy replica.
  const probe = (path: string) => ({
    httpGet: { path, port: PORT, scheme: 'HTTPS' },
    periodSeconds: PROBE_PERIOD_SECONDS,
    timeoutSeconds: PROBE_TIMEOUT_SECONDS,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: GUARD_NAME, namespace: i.namespace, labels },
    spec: {
      replicas: REPLICAS,
      selector: { matchLabels: select },
      template: {
        metadata: { labels },
        spec: {
          // Linux-pinned: the webhook must never wait for the placement it provides.
          os: { name: 'linux' },
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          // Control-plane nodes may hold a replica, as they hold CoreDNS: with failurePolicy Fail every pod
          // creation waits on the webhook, and with one Linux worker a drain would otherwise find its
          // PodDisruptionBudget unmet and nowhere to move the replicas (the real-cluster tier's upgrade).
          tolerations: [
            { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
            { key: 'CriticalAddonsOnly', operator: 'Exists' },
          ],
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: select } },
                },
              ],
            },
          },
          serviceAccountName: GUARD_NAME,
          // fsGroup: the kubelet writes secret volumes as root, and only with fsGroup gives that group the files
          // and group read, so the server (not root) can read its TLS key (run 27: every start ended in exit 2).
          securityContext: {
            runAsNonRoot: true,
            runAsUser: GUARD_UID,
            runAsGroup: GUARD_UID,
            fsGroup: GUARD_UID,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'guard',
              image: i.image,
              args: [
                'guard',
                'serve',
                '--cluster',
                cluster,
                '--listen',
                `0.0.0.0:${PORT}`,
                '--tls-cert',
                '/etc/kubemix/tls/tls.crt',
                '--tls-key',
                '/etc/kubemix/tls/tls.key',
                ...(i.pullSecrets ? [] : ['--no-pull-secrets']),
                ...i.insecureRegistries.flatMap((host) => ['--insecure-registry', host]),
              ],
              env: [{ name: 'KUBEMIX_CACHE_DIR', value: '/var/cache/kubemix' }],
              ports: [{ name: 'https', containerPort: PORT }],
              // Up to 5 min to start before liveness counts: on a slow node, Node.js loading kubemix may take longer
              // than liveness's 30 s, and a replica killed while starting would never serve (failurePolicy Fail).
              startupProbe: { ...probe('/healthz'), ...STARTUP },
              readinessProbe: probe('/healthz'),
              livenessProbe: probe('/healthz'),
              resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'tls', mountPath: '/etc/kubemix/tls', readOnly: true },
                { name: 'cache', mountPath: '/var/cache/kubemix' },
                ...(i.specText === undefined
                  ? []
                  : [
                      {
                        name: 'cluster',
                        mountPath: '/etc/kubemix/cluster.yaml',
                        subPath: 'cluster.yaml',
                        readOnly: true,
                      },
                    ]),
              ],
            },
          ],
          volumes: [
            { name: 'tls', secret: { secretName: `${GUARD_NAME}-tls`, defaultMode: 0o440 } },
            { name: 'cache', emptyDir: {} },
            ...(i.specText === undefined ? [] : [{ name: 'cluster', configMap: { name: `${GUARD_NAME}-cluster` } }]),
          ],
        },
      },
    },
  };
}

/**
 * get on secrets, nothing else: no list or watch, so the webhook can read a
 * Secret only by the name a pod gives. Cluster-wide because pods come from
 * every namespace; resourceNames cannot help, the names are the users'.
 */
function secretReader(i: InstallInput, labels: Record<string, string>): Record<string, unknown>[] {
  const name = `${GUARD_NAME}-pull-secrets`;
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: GUARD_NAME, namespace: i.namespace }],
    },
  ];
}

const RULES = [
  { apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'podtemplates', 'replicationcontrollers'] },
  { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'] },
  { apiGroups: ['batch'], apiVersions: ['v1'], resources: ['jobs', 'cronjobs'] },
];

function webhookConfiguration(
  i: InstallInput,
  kind: string,
  path: string,
  operations: string[],
  labels: Record<string, string>,
): Record<string, unknown> {
  const what = path === '/mutate' ? 'placement' : 'windows';
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name: GUARD_NAME, labels },
    webhooks: [
      {
        name: `${what}.guard.kubemix.io`,
        clientConfig: {
          service: { name: GUARD_NAME, namespace: i.namespace, path, port: 443 },
          caBundle: b64(i.caBundle),
        },
        rules: RULES.map((r) => ({ ...r, operations, scope: '*' })),
        // Never the system namespace nor our own: a webhook down must not block its own restart.
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', i.namespace] },
          ],
        },
        failurePolicy: i.failurePolicy,
        matchPolicy: 'Equivalent',
        sideEffects: 'None',
        timeoutSeconds: i.timeoutSeconds,
        admissionReviewVersions: ['v1'],
        ...(path === '/mutate' ? { reinvocationPolicy: 'IfNeeded' } : {}),
      },
    ],
  };
}
