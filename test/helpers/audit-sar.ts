// The authorization audit's decisions as SubjectAccessReviews: the same
// (credential, request) asked of a real kube-apiserver. The audit speaks of
// scopes ("its own Node", "pods bound to it", "objects its pods reference");
// a SubjectAccessReview names objects, so each scope becomes the object a
// deployed cluster has: the node's own name, a field selector on
// spec.nodeName, or the Secret, ConfigMap and ServiceAccount of a pod bound
// to that node (NodeObjects, made by the test).
import { requestText, type Component, type NeededRequest } from '../../src/audit/index.js';
import { userInfo } from '../../src/audit/audit.js';
import type { Decision } from '../../src/audit/types.js';
import type { ControlPlane } from './kube-control-plane.js';

export interface Ref {
  readonly namespace: string;
  readonly name: string;
}

/** What a node's pods make reachable for its kubelet (the Node authorizer's graph). */
export interface NodeObjects {
  readonly pod: Ref;
  readonly secret: Ref;
  readonly configMap: Ref;
  readonly serviceAccount: Ref;
}

export type Obj = Record<string, any>;

/** The SubjectAccessReview spec for one decision; `graph` by lower-cased node name. */
export function reviewSpec(component: Component, r: NeededRequest, graph: ReadonlyMap<string, NodeObjects>): Obj {
  const who = userInfo(component.credential);
  const node = (
    component.credential.kind === 'node' ? component.credential.node : (component.node ?? '')
  ).toLowerCase();
  const [resource, subresource] = r.resource.split('/') as [string, string | undefined];
  const attrs: Obj = { verb: r.verb, group: r.group, resource, ...(subresource === undefined ? {} : { subresource }) };
  if (r.namespace !== undefined) attrs['namespace'] = r.namespace;
  if (r.name !== undefined) attrs['name'] = r.name;
  const objects = graph.get(node);
  const listing = r.verb === 'list' || r.verb === 'watch';
  switch (r.scope) {
    case 'own-node':
      attrs['name'] = node;
      if (listing) attrs['fieldSelector'] = { rawSelector: `metadata.name=${node}` };
      break;
    case 'node-pods':
      if (listing) attrs['fieldSelector'] = { rawSelector: `spec.nodeName=${node}` };
      else if (objects !== undefined) Object.assign(attrs, objects.pod);
      break;
    case 'pod-referenced': {
      const ref =
        resource === 'secrets'
          ? objects?.secret
          : resource === 'configmaps'
            ? objects?.configMap
            : resource === 'serviceaccounts'
              ? objects?.serviceAccount
              : undefined;
      if (ref === undefined) throw new Error(`no object on ${node} stands for ${requestText(r)}`);
      Object.assign(attrs, ref);
      break;
    }
  }
  return { user: who.user, groups: [...who.groups], resourceAttributes: attrs };
}

export interface Disagreement {
  readonly component: string;
  readonly credential: string;
  readonly request: string;
  readonly audit: string;
  readonly apiServer: string;
}

/** Every decision asked as a SubjectAccessReview; the ones the API server answers otherwise. */
export async function askEach(
  cp: ControlPlane,
  decided: readonly { readonly component: Component; readonly decisions: readonly Decision[] }[],
  graph: ReadonlyMap<string, NodeObjects>,
): Promise<{ asked: number; disagreements: Disagreement[] }> {
  const disagreements: Disagreement[] = [];
  let asked = 0;
  for (const { component, decisions } of decided) {
    for (const d of decisions) {
      const spec = reviewSpec(component, d.request, graph);
      const res = await cp.call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec,
      });
      if (res.status !== 201) throw new Error(`SubjectAccessReview: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      asked += 1;
      const status = res.body['status'] as Obj;
      const allowed = status['allowed'] === true;
      if (allowed !== d.allowed)
        disagreements.push({
          component: `${component.name} on ${component.runsOn}`,
          credential: `${spec['user']} ${JSON.stringify(spec['groups'])}`,
          request: `${requestText(d.request)} ${JSON.stringify(spec['resourceAttributes'])}`,
          audit: `${d.allowed ? 'allowed' : 'denied'} (${d.by})`,
          apiServer: `${allowed ? 'allowed' : 'denied'} ${String(status['reason'] ?? '')}`.trim(),
        });
    }
  }
  return { asked, disagreements };
}
