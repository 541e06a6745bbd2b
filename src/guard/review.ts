// AdmissionReview v1 in and out. Anything that is not a well-formed review
// is a ReviewError (the server answers 400); the API server never sends one,
// so it is a client bug or an attack, not something to admit or deny.
import { KubemixError, ExitCode } from '../errors.js';
import { asMap, type JsonMap } from '../lint/values.js';

export class ReviewError extends KubemixError {
  constructor(message: string) {
    super('guard.bad-review', ExitCode.input, message);
  }
}

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly operation: string;
  /** The object as admitted; undefined for DELETE. */
  readonly object: JsonMap | undefined;
}

export function parseReview(body: Buffer): AdmissionRequest {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ReviewError('body is not JSON');
  }
  const review = asMap(doc);
  if (review?.['apiVersion'] !== 'admission.k8s.io/v1' || review['kind'] !== 'AdmissionReview')
    throw new ReviewError('not an admission.k8s.io/v1 AdmissionReview');
  const request = asMap(review['request']);
  if (request === undefined) throw new ReviewError('AdmissionReview without request');
  const uid = request['uid'];
  if (typeof uid !== 'string' || uid === '') throw new ReviewError('request.uid missing');
  const object = request['object'] === undefined || request['object'] === null ? undefined : asMap(request['object']);
  if (request['object'] !== undefined && request['object'] !== null && object === undefined)
    throw new ReviewError('request.object is not an object');
  const kind = asMap(request['kind'])?.['kind'];
  const namespace = request['namespace'];
  return {
    uid,
    kind: typeof kind === 'string' ? kind : String(object?.['kind'] ?? ''),
    namespace: typeof namespace === 'string' ? namespace : undefined,
    operation: typeof request['operation'] === 'string' ? request['operation'] : '',
    object,
  };
}

export interface Verdict {
  readonly allowed: boolean;
  readonly message?: string;
  readonly patch?: readonly unknown[];
  readonly warnings?: readonly string[];
}

export function reviewResponse(uid: string, v: Verdict): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: v.allowed };
  if (!v.allowed && v.message !== undefined)
    response['status'] = { code: 403, reason: 'Forbidden', message: v.message };
  if (v.patch !== undefined && v.patch.length > 0) {
    response['patchType'] = 'JSONPatch';
    response['patch'] = Buffer.from(JSON.stringify(v.patch)).toString('base64');
  }
  if (v.warnings !== undefined && v.warnings.length > 0) response['warnings'] = v.warnings;
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
