// One Kubernetes API call: GET /api/v1/namespaces/{ns}/secrets/{name}, the
// only access the webhook's ClusterRole grants (get on secrets, no list or
// watch), through kubemix's Kubernetes client. A missing Secret is undefined,
// as the kubelet ignores a missing pull secret; everything else that is not
// 200 is a KubeError. Neither the token nor the Secret's data ever go into a
// message.
import type { KubeAccess } from './config.js';
import { kubeConfigOf, kubeErrorOf, loadKubeClient, statusOf, withDeadline } from './client.js';
import { KubeError } from './errors.js';

export interface SecretData {
  readonly type: string;
  /** Values base64-decoded. */
  readonly data: Readonly<Record<string, Buffer>>;
}

const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export async function getSecret(
  access: KubeAccess,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<SecretData | undefined> {
  if (!NAME.test(namespace) || !NAME.test(name))
    throw new KubeError('kube.bad-name', `${namespace}/${name} is not a valid Secret name`);
  const client = await loadKubeClient();
  const api = kubeConfigOf(client, access).makeApiClient(client.CoreV1Api);
  const what = `GET Secret ${namespace}/${name}`;
  let secret;
  try {
    secret = await withDeadline(api.readNamespacedSecret({ name, namespace }), timeoutMs, what, access.server);
  } catch (error) {
    const status = statusOf(error);
    if (status === 404) return undefined;
    if (status === 403) {
      throw new KubeError('kube.forbidden', `not allowed to get Secret ${namespace}/${name} (HTTP 403)`, {
        status: 403,
        hint: 'kubemix guard install renders a ClusterRole with get on secrets; apply it, or run guard serve with --no-pull-secrets',
      });
    }
    if (status === 401)
      throw new KubeError(
        'kube.unauthorized',
        `${access.server} refused the credentials of the ${access.origin} (HTTP 401)`,
        { status: 401 },
      );
    throw kubeErrorOf(error, what, access.server);
  }
  const data: Record<string, Buffer> = {};
  // client-node hands `data` over as the API sent it: base64 strings.
  for (const [key, value] of Object.entries(secret.data ?? {})) data[key] = Buffer.from(value, 'base64');
  return { type: secret.type ?? '', data };
}
