// The plan hash: sha256 of the canonical plan body (keys sorted at every
// level, no whitespace) without its own `hash` field. The planner writes it,
// the executor checks it.
import { canonicalSha256 } from '../util/json.js';
import type { Plan } from './types.js';

export function planHash(plan: Omit<Plan, 'hash'> & { readonly hash?: string }): string {
  const { hash: _ignored, ...body } = plan;
  return canonicalSha256(body);
}
