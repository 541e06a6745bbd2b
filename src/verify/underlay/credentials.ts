// What the credentials script's lines (credential-scripts.ts) mean: which
// credential is about to expire, has expired, or could not be read, and who
// should have renewed it. Used by verify's credentials probe and diagnose's
// credential signature. Pure.
//
// A renewed credential is never close to its end: the kubelet renews a pod's
// projected token at 80 % of the lifetime it asked for
// (pkg/kubelet/token/token_manager.go), its client certificate at 70–90 %
// (client-go util/certificate), calico-node its CNI token at a quarter of its
// day (node/pkg/cni/token_watch.go). So one inside its last tenth (at most
// the last 30 days) is a renewal that did not happen, and one without a
// renewer (kubeadm's certificates, the kubelet's self-signed serving
// certificate) is one whose renewal is due: both are warned about while
// there is still time.
import { MARK } from './scripts.js';
import type { CredentialKind } from './credential-scripts.js';

export interface NodeCredential {
  readonly kind: CredentialKind;
  readonly name: string;
  readonly lifetimeSeconds: number;
  readonly remainingSeconds: number;
}

export interface CredentialLines {
  readonly credentials: readonly NodeCredential[];
  /** Credentials the script found and could not read: `name reason`. */
  readonly unread: readonly { readonly name: string; readonly reason: string }[];
  /** The script's closing line was seen. */
  readonly complete: boolean;
}

const KINDS: readonly CredentialKind[] = [
  'kubelet-client',
  'kubelet-serving',
  'kubeadm-cert',
  'pod-token',
  'cni-token',
  'legacy-token',
];

/** The `KUBEMIX-PROBE credential …` lines of the script's output. */
export function readCredentialLines(stdout: string): CredentialLines {
  const credentials: NodeCredential[] = [];
  const unread: { name: string; reason: string }[] = [];
  let complete = false;
  for (const raw of stdout.split(/\r?\n/)) {
    const words = raw.trim().split(/\s+/);
    if (words[0] !== MARK) continue;
    if (words[1] === 'credentials') complete = true;
    if (words[1] === 'credential-unread') unread.push({ name: words[2] ?? '?', reason: words.slice(3).join(' ') });
    if (words[1] !== 'credential' || words.length !== 6) continue;
    const kind = words[2] as CredentialKind;
    const lifetime = Number(words[4]);
    const remaining = Number(words[5]);
    if (!KINDS.includes(kind) || !Number.isFinite(lifetime) || !Number.isFinite(remaining)) continue;
    credentials.push({ kind, name: words[3] ?? '?', lifetimeSeconds: lifetime, remainingSeconds: remaining });
  }
  return { credentials, unread, complete };
}

const DAY = 86_400;
/** The longest warning a credential gets before its end. */
export const WARN_AT_MOST_SECONDS = 30 * DAY;

/** Seconds before its end a credential of `lifetime` seconds is warned about: its last tenth, at most 30 days. */
export function warnWindowSeconds(lifetime: number): number {
  return Math.min(Math.max(lifetime, 0) / 10, WARN_AT_MOST_SECONDS);
}

/** A duration as people read it: `41 min`, `5.2 h`, `17 days`. */
export function duration(seconds: number): string {
  const s = Math.abs(seconds);
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 2 * DAY) return `${(s / 3600).toFixed(1)} h`;
  return `${Math.round(s / DAY)} days`;
}

/** Who renews a credential of `kind`, and what to look at when it did not. */
export const RENEWAL: Readonly<Record<CredentialKind, string>> = {
  'kubelet-client':
    'the kubelet rotates its client certificate at 70–90 % of its lifetime (rotateCertificates): look for pending CSRs (kubectl get csr) and the kubelet log',
  'kubelet-serving':
    "nothing renews the kubelet's self-signed serving certificate: remove kubelet.crt and kubelet.key from the kubelet's pki directory and restart the kubelet, which makes a new one",
  'kubeadm-cert':
    'kubeadm certs renew all on this control plane (then restart its static pods), or kubemix upgrade, which renews them',
  'pod-token':
    "the kubelet renews a pod's projected token at 80 % of its lifetime: is the kubelet running and reaching the API server, and is the pod still on the node?",
  'cni-token':
    "calico-node renews the CNI plugin's token (calico-kubeconfig) every few hours: is calico-node running on the node?",
  'legacy-token':
    'a token an earlier kubemix minted for the Windows flanneld/kube-proxy services: kubemix up removes it (win-retire-legacy); revoke it by recreating its ServiceAccount (docs/windows.md)',
};

export interface CredentialJudgement {
  readonly expired: readonly NodeCredential[];
  /** Expiring within their warning window, legacy tokens and unread credentials, as sentences. */
  readonly warnings: readonly string[];
  /** The renewal advice for what is warned about or expired, one per kind. */
  readonly advice: readonly string[];
  /** The credential closest to its end. */
  readonly first?: NodeCredential;
}

export function judgeCredentials(lines: CredentialLines): CredentialJudgement {
  const expired = lines.credentials.filter((c) => c.remainingSeconds <= 0);
  const soon = lines.credentials.filter(
    (c) =>
      c.remainingSeconds > 0 &&
      (c.kind === 'legacy-token' || c.remainingSeconds < warnWindowSeconds(c.lifetimeSeconds)),
  );
  const warnings = [
    ...soon.map((c) =>
      c.kind === 'legacy-token'
        ? `${c.name}: a service-mode token is still on the node (valid ${duration(c.remainingSeconds)} more)`
        : `${c.name} (${c.kind}) expires in ${duration(c.remainingSeconds)} of ${duration(c.lifetimeSeconds)}`,
    ),
    ...lines.unread.map((u) => `${u.name}: not read (${u.reason})`),
  ];
  const kinds = [...new Set([...expired, ...soon].map((c) => c.kind))];
  const first = [...lines.credentials].sort((a, b) => a.remainingSeconds - b.remainingSeconds)[0];
  const advice = [
    ...kinds.map((k) => RENEWAL[k]),
    ...(lines.unread.some((u) => u.reason === 'openssl-missing')
      ? ['install openssl on the node: its certificates are read with it']
      : []),
    ...(lines.unread.some((u) => u.reason !== 'openssl-missing')
      ? ['a credential file the script could not read: look at it on the node']
      : []),
  ];
  return { expired, warnings, advice, ...(first === undefined ? {} : { first }) };
}
