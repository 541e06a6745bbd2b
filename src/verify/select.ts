// --only / --skip: which checks run, by regular expressions over check ids
// (`underlay/udp-4789/host-1/host-2`). Pure.
//
// Matched by RE2 (re2js, a pure-JavaScript port of Go's regexp): its time is
// linear in the id's length, so no pattern can backtrack for minutes the way
// `(a+)+$` or `(a|a)*b` do in JavaScript's RegExp (issue 31). RE2 syntax is
// JavaScript's without lookaround and backreferences
// (https://github.com/google/re2/wiki/Syntax); the length bound keeps the
// compiled program small as well.
import { RE2JS } from 're2js';
import { InputError } from '../errors.js';

/** The longest --only / --skip pattern accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1000;

const HINT =
  'give a regular expression (RE2 syntax: no lookahead, lookbehind or backreferences) over check ids such as underlay/udp-4789/host-1/host-2';

function compile(flag: string, source: string | undefined): RE2JS | undefined {
  if (source === undefined) return undefined;
  const path = `flags.${flag.replace(/^--/, '')}`;
  if (source.length > MAX_PATTERN_LENGTH)
    throw new InputError(
      'flags.invalid',
      `${flag} is ${source.length} characters long; the limit is ${MAX_PATTERN_LENGTH}`,
      { path, hint: `${HINT}; match a shorter part of the ids (a probe name, a node name)` },
    );
  try {
    return RE2JS.compile(source);
  } catch (error) {
    throw new InputError(
      'flags.invalid',
      `${flag} ${JSON.stringify(source)} is not a regular expression: ${(error as Error).message}`,
      { path, hint: HINT },
    );
  }
}

export function checkSelector(only: string | undefined, skip: string | undefined): (id: string) => boolean {
  const keep = compile('--only', only);
  const drop = compile('--skip', skip);
  return (id) => (keep === undefined || keep.test(id)) && (drop === undefined || !drop.test(id));
}
