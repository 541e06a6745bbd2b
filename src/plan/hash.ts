// The plan hash: sha256 of the plan's body exactly as plan.json holds it —
// JSON indented by two spaces and a final newline — without the `hash` line.
// Written once: `plan --out` hashes the very pieces it writes (a plan of 1000
// nodes is ~50 MB of JSON; a second, canonical serialisation for the hash was
// the largest single cost of planning), and the executor hashes the bytes it
// read instead of serialising the parsed plan again. The planner writes it,
// the executor checks it; any edit of plan.json, whitespace included, fails.
import { createHash } from 'node:crypto';
import { ChunkedWriter, writeJsonPretty } from '../util/json.js';
import type { Plan } from './types.js';

/** A plan without its hash: what the hash covers. */
export type PlanBody = Omit<Plan, 'hash'>;

/** Stands for the hash in a plan.json being written, replaced in place once the hash is known. */
export const HASH_PLACEHOLDER = '0'.repeat(64);

/**
 * Writes plan.json's text for `plan` piece by piece: `apiVersion`, `kind`,
 * the hash line (`hashed` false: the only piece the hash does not cover),
 * then every other key in the plan's own order. The hashed pieces together
 * are `JSON.stringify(body, null, 2)` and a newline.
 */
export function writePlanText(
  plan: PlanBody & { readonly hash?: string },
  hash: string,
  out: (piece: string, hashed: boolean) => void,
): void {
  const { apiVersion, kind, hash: _own, ...rest } = plan;
  const hashed = (piece: string): void => out(piece, true);
  hashed(`{\n  "apiVersion": ${JSON.stringify(apiVersion)},\n  "kind": ${JSON.stringify(kind)}`);
  out(`,\n  "hash": ${JSON.stringify(hash)}`, false);
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    hashed(`,\n  ${JSON.stringify(key)}: `);
    writeJsonPretty(value, 2, hashed, '  ');
  }
  hashed('\n}\n');
}

/**
 * plan.json's bytes for `body`, handed to `write` in ~64 KiB pieces and hashed
 * on the way, the hash line holding HASH_PLACEHOLDER: returns the hash and the
 * byte offset of the placeholder, for a writer to put the hash there once known.
 */
export function streamPlanJson(
  body: PlanBody & { readonly hash?: string },
  write: (bytes: Buffer) => void,
): { readonly hash: string; readonly hashAt: number } {
  const hash = createHash('sha256');
  let written = 0;
  let hashAt = -1;
  const emit = (bytes: Buffer): void => {
    write(bytes);
    written += bytes.length;
  };
  const covered = new ChunkedWriter({
    update: (piece: string) => {
      const bytes = Buffer.from(piece);
      hash.update(bytes);
      emit(bytes);
    },
  });
  writePlanText(body, HASH_PLACEHOLDER, (piece, hashed) => {
    if (hashed) return covered.write(piece);
    covered.flush();
    // The hash line is ASCII: its character offset is its byte offset.
    hashAt = written + piece.indexOf(HASH_PLACEHOLDER);
    emit(Buffer.from(piece));
  });
  covered.flush();
  return { hash: hash.digest('hex'), hashAt };
}

export function planHash(plan: PlanBody & { readonly hash?: string }): string {
  return streamPlanJson(plan, () => {}).hash;
}

/** `plan` with its hash, keys in plan.json's order. */
export function withPlanHash(body: PlanBody & { readonly hash?: string }, hash: string = planHash(body)): Plan {
  const { apiVersion, kind, hash: _old, ...rest } = body;
  return { apiVersion, kind, hash, ...rest };
}

/** The hash line in plan.json's text: the top level's only keys are indented by exactly two spaces. */
const HASH_LINE = /,\n {2}"hash": "([0-9a-f]{64})"(?=,\n {2}")/;

/**
 * The hash plan.json's bytes should carry: sha256 of the file without its
 * hash line, and the hash the line names; undefined when it has no such line.
 */
export function planFileHash(bytes: Buffer): { readonly actual: string; readonly named: string } | undefined {
  // latin1: one character per byte, so the match's index is a byte offset.
  const line = HASH_LINE.exec(bytes.subarray(0, 4096).toString('latin1'));
  if (line === null || line[1] === undefined) return undefined;
  const actual = createHash('sha256')
    .update(bytes.subarray(0, line.index))
    .update(bytes.subarray(line.index + line[0].length))
    .digest('hex');
  return { actual, named: line[1] };
}
