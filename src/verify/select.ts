// --only / --skip: which checks run, by regular expressions over check ids
// (`underlay/udp-4789/host-1/host-2`). Pure.
import { InputError } from '../errors.js';

function compile(flag: string, source: string | undefined): RegExp | undefined {
  if (source === undefined) return undefined;
  try {
    return new RegExp(source);
  } catch (error) {
    throw new InputError(
      'flags.invalid',
      `${flag} ${JSON.stringify(source)} is not a regular expression: ${(error as Error).message}`,
      {
        path: `flags.${flag.replace(/^--/, '')}`,
        hint: 'give a JavaScript regular expression over check ids such as underlay/udp-4789/host-1/host-2',
      },
    );
  }
}

export function checkSelector(only: string | undefined, skip: string | undefined): (id: string) => boolean {
  const keep = compile('--only', only);
  const drop = compile('--skip', skip);
  return (id) => (keep === undefined || keep.test(id)) && (drop === undefined || !drop.test(id));
}
