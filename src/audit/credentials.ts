// The credential-lifetime audit (`kubemix plan --audit`, beside the
// authorization and traffic audits): every credential a component runs with
// (from the authorization audit's tracing, which reads what the plan ships),
// with how long it lives, what it is bound to, who renews it and when. It
// fails when a credential kubemix renders outlives its renewal (a replaced
// copy stays good longer than a renewal interval), expires before it is
// renewed, has nothing to renew it while its component runs unattended, or
// is one value shared by several nodes. Upstream defaults that would fail
// the same test are notes. The facts and where they are written are below;
// the API server's flags are kubeadm's defaults, which kubemix keeps. Pure.
import { parseAllDocuments } from 'yaml';
import { components, type AuditInput } from './components.js';
import type { Component, Credential } from './types.js';

type Obj = Record<string, unknown>;

const HOUR = 3600;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/** kubelet's projected-token refresh: at 80 % of the requested lifetime, at most every 24 h (pkg/kubelet/token/token_manager.go). */
const KUBELET_TOKEN =
  'kubelet token manager (pkg/kubelet/token/token_manager.go: refresh at 80 % of the lifetime, at most 24 h)';
/** The default projected token's request, which kube-apiserver extends to a year while --service-account-extend-token-expiration is on (its default). */
const DEFAULT_TOKEN_SECONDS = 3607;

export interface CredentialLife {
  readonly component: string;
  readonly os: Component['os'];
  /** The nodes (or a description) it runs on; several rows of one credential kind merge. */
  readonly runsOn: readonly string[];
  readonly credential: string;
  /** Seconds from issue to expiry. */
  readonly lifetimeSeconds: number;
  /** Who renews it without kubemix running; undefined: nothing does. */
  readonly renewer: string | undefined;
  /** Seconds from issue to its renewal (the replacement); undefined without a renewer. */
  readonly renewedAfterSeconds: number | undefined;
  readonly boundTo: string;
  /** Nodes holding the same value; one for a per-node credential. */
  readonly sharedBy: readonly string[];
  /** Whether its component runs unattended (a node's service or pod), or only while kubemix runs. */
  readonly unattended: boolean;
  /** kubemix renders it (its manifests, tasks) or upstream's defaults make it. */
  readonly origin: 'kubemix' | 'upstream';
  readonly source: string;
}

export interface CredentialFinding {
  readonly severity: 'error' | 'info';
  readonly credential: string;
  readonly message: string;
}

export interface CredentialResult {
  readonly credentials: readonly CredentialLife[];
  readonly findings: readonly CredentialFinding[];
  readonly ok: boolean;
}

function podSpecOf(o: Obj): Obj {
  return (((((o['spec'] ?? {}) as Obj)['template'] ?? {}) as Obj)['spec'] as Obj) ?? {};
}

/** The token a workload's pods run with: an explicit projected token volume, or the default one. */
function podToken(workload: Obj | undefined): { seconds: number; explicit: boolean } {
  if (workload === undefined) return { seconds: DEFAULT_TOKEN_SECONDS, explicit: false };
  const spec = podSpecOf(workload);
  const volumes = (Array.isArray(spec['volumes']) ? spec['volumes'] : []) as Obj[];
  for (const v of volumes) {
    const sources = (((v['projected'] ?? {}) as Obj)['sources'] ?? []) as Obj[];
    for (const s of sources) {
      const token = s['serviceAccountToken'] as Obj | undefined;
      const seconds = token?.['expirationSeconds'];
      if (spec['automountServiceAccountToken'] === false && typeof seconds === 'number')
        return { seconds, explicit: true };
    }
  }
  return { seconds: DEFAULT_TOKEN_SECONDS, explicit: false };
}

/** A pod token's life: the lifetime the API server grants and the kubelet's refresh of it. */
function podTokenLife(token: { seconds: number }): Pick<CredentialLife, 'lifetimeSeconds' | 'renewedAfterSeconds'> {
  // The kubelet computes its refresh from the lifetime it asked for, not the one granted: an extended
  // token (a year) is refreshed 20 % of 3607 s before its extended expiry.
  if (token.seconds === DEFAULT_TOKEN_SECONDS)
    return { lifetimeSeconds: YEAR, renewedAfterSeconds: YEAR - Math.round(0.2 * DEFAULT_TOKEN_SECONDS) };
  return { lifetimeSeconds: token.seconds, renewedAfterSeconds: Math.min(Math.round(0.8 * token.seconds), DAY) };
}

function manifests(input: AuditInput): { object: Obj; file: string }[] {
  return input.files
    .filter((f) => f.node === 'cluster' && f.remotePath.startsWith('manifests/'))
    .flatMap((f) => parseAllDocuments(f.content).map((d) => ({ object: (d.toJS() ?? {}) as Obj, file: f.remotePath })));
}

/** A minted token's task: its lifetime (`--duration=`) and when `kubemix up` re-mints it (its check's `-mmin -N`). */
function minted(input: AuditInput, how: string): { seconds: number; renewMinutes: number | undefined; task: string } {
  const id = /TokenRequest \(([^)]+)\)/.exec(how)?.[1] ?? '';
  const task = input.plan.tasks.find((t) => t.id === id);
  const hours = Number(/--duration=(\d+)h/.exec(task?.apply.script ?? '')?.[1] ?? NaN);
  const minutes = /-mmin -(\d+)/.exec(task?.check?.script ?? '')?.[1];
  return { seconds: hours * HOUR, renewMinutes: minutes === undefined ? undefined : Number(minutes), task: id };
}

/** Which secret fills a credential's token file on a node, for telling one value shared by several nodes. */
function secretOf(c: Component): string | undefined {
  return /← secret (\S+)/.exec(c.credentialSource)?.[1];
}

function life(
  input: AuditInput,
  c: Component,
  workloads: Map<string, { object: Obj; file: string }>,
): CredentialLife | undefined {
  const base = { component: c.name, os: c.os, runsOn: [c.runsOn] };
  const cred: Credential = c.credential;
  switch (cred.kind) {
    case 'node':
      return {
        ...base,
        credential: 'kubelet client certificate (kubelet.conf)',
        lifetimeSeconds: YEAR,
        renewer:
          'the kubelet (rotateCertificates, kubeadm default; client-go util/certificate rotates at 70–90 % of the lifetime)',
        renewedAfterSeconds: Math.round(0.9 * YEAR),
        boundTo: 'the identity of its Node (system:node:<name>)',
        sharedBy: [c.runsOn],
        unattended: true,
        origin: 'upstream',
        source:
          'kube-controller-manager --cluster-signing-duration default 8760h; kubeadm KubeletConfiguration rotateCertificates: true',
      };
    case 'admin':
      return {
        ...base,
        credential: 'admin.conf client certificate (cluster-admin)',
        lifetimeSeconds: YEAR,
        renewer: undefined,
        renewedAfterSeconds: undefined,
        boundTo: 'nothing: kubernetes-admin in kubeadm:cluster-admins',
        sharedBy: [],
        unattended: false,
        origin: 'upstream',
        source:
          'kubeadm certificates (a year; renewed by kubeadm upgrade or kubeadm certs renew); used only while kubemix runs',
      };
    case 'unknown':
      return undefined;
    case 'serviceaccount': {
      const label = `ServiceAccount ${cred.namespace}/${cred.name}`;
      if (cred.how.startsWith('TokenRequest (task')) {
        const m = minted(input, cred.how);
        const renewAfter = m.renewMinutes === undefined ? undefined : m.renewMinutes * 60;
        return {
          ...base,
          credential: `${label}, minted token (${m.task})`,
          lifetimeSeconds: m.seconds,
          renewer: undefined,
          renewedAfterSeconds: renewAfter,
          boundTo: 'nothing: no object it is bound to, so it cannot be revoked short of deleting the ServiceAccount',
          sharedBy: [c.runsOn],
          unattended: true,
          origin: 'kubemix',
          source: `${m.task}: --duration, and its check's re-mint age (kubemix up re-mints it, when someone runs it)`,
        };
      }
      if (cred.how.startsWith('TokenRequest by calico-node'))
        return {
          ...base,
          credential: `${label}, token calico-node requests for the CNI plugin (calico-kubeconfig)`,
          lifetimeSeconds: DAY,
          renewer: 'calico-node (node/pkg/cni/token_watch.go: 24 h tokens, renewed every 6 h)',
          renewedAfterSeconds: DAY / 4,
          boundTo: "nothing: an unbound TokenRequest per node's calico-node",
          sharedBy: [c.runsOn],
          unattended: true,
          origin: 'upstream',
          source:
            'projectcalico/calico node/pkg/cni/token_watch.go defaultCNITokenValiditySeconds, defaultRefreshFraction',
        };
      const workload = /(?:DaemonSet|Deployment) (\S+) serviceAccountName/.exec(c.credentialSource)?.[1];
      const rendered = workload === undefined ? undefined : workloads.get(workload);
      const token = podToken(rendered?.object);
      // kubemix's own workloads say so (app.kubernetes.io/managed-by); upstream's manifests, rendered as they ship, do not.
      const labels = (((rendered?.object['metadata'] ?? {}) as Obj)['labels'] ?? {}) as Obj;
      const ours = labels['app.kubernetes.io/managed-by'] === 'kubemix';
      return {
        ...base,
        credential: `${label}, the pod's projected token (${token.explicit ? `explicit, ${token.seconds} s` : `default volume, ${DEFAULT_TOKEN_SECONDS} s asked, a year granted`})`,
        ...podTokenLife(token),
        renewer: KUBELET_TOKEN,
        boundTo: "its pod, and since 1.32 its pod's Node (ServiceAccountTokenPodNodeInfo): void once either is deleted",
        sharedBy: [c.runsOn],
        unattended: true,
        origin: ours ? 'kubemix' : 'upstream',
        source:
          rendered !== undefined
            ? `kubemix ${rendered.file} (${workload ?? ''})`
            : `${c.credentialSource}; kube-apiserver --service-account-extend-token-expiration (default on) extends ${DEFAULT_TOKEN_SECONDS} s to a year`,
      };
    }
  }
}

const days = (s: number): string =>
  s >= DAY ? `${Math.round((s / DAY) * 10) / 10} d` : s >= HOUR ? `${Math.round((s / HOUR) * 10) / 10} h` : `${s} s`;

export function auditCredentials(input: AuditInput): CredentialResult {
  const workloads = new Map(
    manifests(input)
      .filter((m) => ['DaemonSet', 'Deployment'].includes(String(m.object['kind'])))
      .map((m) => {
        const meta = (m.object['metadata'] ?? {}) as Obj;
        return [`${String(meta['namespace'] ?? 'default')}/${String(meta['name'])}`, m] as const;
      }),
  );
  const all = components(input);
  // A minted token placed from one secret on several nodes is one value shared by them.
  const bySecret = new Map<string, string[]>();
  for (const c of all) {
    const s = secretOf(c);
    if (s !== undefined) bySecret.set(s, [...(bySecret.get(s) ?? []), c.runsOn]);
  }
  const lives = all.flatMap((c): CredentialLife[] => {
    const l = life(input, c, workloads);
    if (l === undefined) return [];
    const secret = secretOf(c);
    return [secret === undefined ? l : { ...l, sharedBy: bySecret.get(secret) ?? l.sharedBy }];
  });
  const merged = new Map<string, CredentialLife>();
  for (const l of lives) {
    const key = [l.component, l.os, l.credential, l.sharedBy.length > 1 ? l.sharedBy.join(',') : ''].join('|');
    const seen = merged.get(key);
    merged.set(key, seen === undefined ? l : { ...seen, runsOn: [...new Set([...seen.runsOn, ...l.runsOn])] });
  }
  const credentials = [...merged.values()];
  const findings = credentials.flatMap(findingsOf);
  return { credentials, findings, ok: !findings.some((f) => f.severity === 'error') };
}

function findingsOf(l: CredentialLife): CredentialFinding[] {
  const out: CredentialFinding[] = [];
  const who = `${l.component} (${l.os}) on ${l.runsOn.join(', ')}`;
  const add = (error: boolean, message: string): void => {
    out.push({ severity: error ? 'error' : 'info', credential: l.credential, message: `${who}: ${message}` });
  };
  const ours = l.origin === 'kubemix';
  if (l.unattended && l.renewer === undefined)
    add(
      true,
      `lives ${days(l.lifetimeSeconds)} and nothing renews it while kubemix does not run${l.renewedAfterSeconds === undefined ? '' : ` (a kubemix run would after ${days(l.renewedAfterSeconds)})`}: when it expires the component stops`,
    );
  if (l.renewer !== undefined && l.renewedAfterSeconds !== undefined && l.renewedAfterSeconds >= l.lifetimeSeconds)
    add(true, `renewed after ${days(l.renewedAfterSeconds)}, but it expires after ${days(l.lifetimeSeconds)}`);
  const after = l.renewedAfterSeconds;
  if (after !== undefined && l.lifetimeSeconds - after > Math.max(after, HOUR))
    add(
      ours,
      `outlives its renewal: a replaced copy stays good ${days(l.lifetimeSeconds - after)} after it was renewed (renewed after ${days(after)})${ours ? '' : ' — an upstream default, left as upstream ships it'}`,
    );
  if (l.sharedBy.length > 1)
    add(
      true,
      `one value on ${l.sharedBy.length} nodes (${l.sharedBy.join(', ')}): one stolen copy acts for all of them`,
    );
  if (l.unattended && l.credential.includes('a year granted'))
    add(
      ours,
      `its token is good for a year: the API server extends the default token volume's ${DEFAULT_TOKEN_SECONDS} s (--service-account-extend-token-expiration)${ours ? '; give its pods an explicit projected token' : ', left as upstream ships it'}`,
    );
  if (!l.unattended)
    add(
      false,
      `lives ${days(l.lifetimeSeconds)} from its issue; used only while kubemix runs; verify warns before it expires`,
    );
  return out;
}

export function credentialsText(r: CredentialResult): string {
  const lines = r.credentials.map(
    (l) =>
      `${l.component} (${l.os}) on ${l.runsOn.join(', ')} — ${l.credential}\n  lives ${days(l.lifetimeSeconds)}; ${l.renewer === undefined ? 'renewed by nothing that runs without kubemix' : `renewed after ${days(l.renewedAfterSeconds ?? 0)} by ${l.renewer}`}; bound to ${l.boundTo}; ${l.sharedBy.length > 1 ? `SHARED by ${l.sharedBy.join(', ')}` : l.sharedBy.length === 0 ? 'on the control planes only' : 'its own per node'}  (${l.source})`,
  );
  const notes = r.findings.map((f) => `${f.severity === 'error' ? 'FAIL' : 'note'} ${f.credential}: ${f.message}`);
  const errors = r.findings.filter((f) => f.severity === 'error').length;
  return `${[...lines, '', ...notes, '', r.ok ? 'credential audit: every credential is renewed before it expires, without kubemix, and is its own per node' : `credential audit FAILED: ${errors} problem(s)`].join('\n').replace(/\n\n\n+/g, '\n\n')}\n`;
}
