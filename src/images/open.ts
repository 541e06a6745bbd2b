// A bundle from a directory (an OCI image layout) or an archive file, whichever the path is.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readArchive } from './archive.js';
import { bundleError, openLayoutDir, type Bundle } from './bundle.js';

export async function openBundle(path: string): Promise<Bundle> {
  const s = await stat(path).catch(() => undefined);
  if (s === undefined)
    throw bundleError(path, 'no such file or directory', 'give an image bundle directory or archive');
  if (s.isDirectory()) {
    const layout = await stat(join(path, 'index.json')).catch(() => undefined);
    if (layout === undefined)
      throw bundleError(path, 'not an OCI image layout (no index.json)', 'write it with `kubemix images pull --out`');
    return openLayoutDir(path);
  }
  return readArchive(path);
}
