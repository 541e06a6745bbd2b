// A plan names the credentials of the spec's URLs (`{{secret:url-userinfo-…}}`)
// but never holds them: `kubemix up SPEC` reads them from the spec into the
// secret store. A plan run without its spec (`up --plan DIR`) on a state
// directory that never had them is refused before anything runs, with what to do.
import { InputError } from '../errors.js';
import type { ResolvedDownload } from '../model/downloads.js';
import { URL_SECRET_PREFIX } from '../model/url-credentials.js';
import { secretRefs, type SecretStore } from './secrets.js';

export function assertUrlSecretsKnown(
  names: ReadonlySet<string>,
  downloads: readonly ResolvedDownload[],
  store: SecretStore,
): void {
  const fromDownloads = downloads.flatMap((d) => secretRefs(`${d.url} ${d.checksumUrl ?? ''}`));
  const missing = [...new Set([...names, ...fromDownloads])]
    .filter((n) => n.startsWith(URL_SECRET_PREFIX) && !store.has(n))
    .sort();
  if (missing.length === 0) return;
  throw new InputError(
    'secret.url-credentials-missing',
    `the plan needs the credentials of ${missing.length === 1 ? 'a URL' : `${missing.length} URLs`} (${missing.join(', ')}), and the state directory's secret store (${store.path}) does not hold them`,
    {
      path: store.path,
      hint: 'run it with the spec that holds them: `kubemix up SPEC --plan DIR` (the spec URL keeps its user:password@; the plan never holds it)',
    },
  );
}
