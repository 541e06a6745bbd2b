// Registry credentials in a Kubernetes image pull Secret, read as the kubelet
// reads them: `kubernetes.io/dockerconfigjson` holds a Docker config under
// `.dockerconfigjson` ({"auths": {...}}); the legacy `kubernetes.io/dockercfg`
// holds the bare auths map under `.dockercfg`. Other types hold none.
import { credentialsOfAuths, type Credential } from './credentials.js';

export const PULL_SECRET_TYPES = ['kubernetes.io/dockerconfigjson', 'kubernetes.io/dockercfg'] as const;

/** undefined when the Secret is of another type or its payload is not JSON. */
export function credentialsOfPullSecret(
  type: string,
  data: Readonly<Record<string, Buffer>>,
): Map<string, Credential> | undefined {
  const json =
    type === 'kubernetes.io/dockerconfigjson'
      ? data['.dockerconfigjson']
      : type === 'kubernetes.io/dockercfg'
        ? data['.dockercfg']
        : undefined;
  if (json === undefined) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(json.toString('utf8'));
  } catch {
    return undefined;
  }
  return credentialsOfAuths(type === 'kubernetes.io/dockercfg' ? doc : (doc as { auths?: unknown } | null)?.auths);
}
