// Problems found in the spec generated from an inventory, told in the
// inventory's terms: the location is the inventory's `file:line` the field
// came from (or the --name flag), never a line of a spec the user has not
// seen, and a message naming `spec.infrastructure.hosts[3]` names the
// inventory host instead.
import type { Diagnostic } from '../../errors.js';
import type { Origin } from './to-spec.js';

export interface ImportSource {
  /** The inventory file as the user named it. */
  readonly file: string;
  readonly origins: ReadonlyMap<string, Origin>;
  /** The flag the cluster name came from, when it did not come from the file name. */
  readonly nameFlag?: string;
}

export function inventoryLocations(diagnostics: readonly Diagnostic[], src: ImportSource): Diagnostic[] {
  return diagnostics.map((d) => {
    const { location: _generated, ...rest } = d;
    const message = d.message.replace(/spec\.infrastructure\.hosts\[\d+\]/g, (path) => hostRef(path, src));
    if (src.nameFlag !== undefined && (d.path === 'metadata.name' || d.path.startsWith('metadata.name.'))) {
      return { ...rest, message, path: src.nameFlag };
    }
    const origin = originOf(d.path, src.origins);
    return origin === undefined ? { ...rest, message } : { ...rest, message, location: `${src.file}:${origin.line}` };
  });
}

/** The origin of the longest recorded path that `path` is, or lies under. */
function originOf(path: string, origins: ReadonlyMap<string, Origin>): Origin | undefined {
  let best: [string, Origin] | undefined;
  for (const [key, origin] of origins) {
    const under = path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`);
    if (under && (best === undefined || key.length > best[0].length)) best = [key, origin];
  }
  return best?.[1];
}

function hostRef(path: string, src: ImportSource): string {
  const origin = src.origins.get(path);
  return origin?.host === undefined ? path : `host ${origin.host} (${src.file}:${origin.line})`;
}
