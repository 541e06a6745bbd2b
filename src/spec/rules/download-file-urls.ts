import { error, type Rule } from './context.js';

/**
 * A `file:` URL in `spec.downloads` is a path on the machine that fetches it
 * (the hypervisor reads `images/…` from its own disk). One naming a host,
 * `file://server/path`, points at another machine's file, which neither the
 * hypervisor's path check nor curl (it reads only local files from `file:`
 * URLs) can reach; WHATWG URL parsing gives `file://localhost/path` an empty
 * host, like `file:///path`, so that form stays allowed.
 */
export const downloadFileUrls: Rule = (ctx) =>
  Object.entries(ctx.spec.downloads).flatMap(([id, d]) => {
    if (d.url === undefined || !/^file:/i.test(d.url)) return [];
    const url = new URL(d.url);
    if (url.host === '') return [];
    const path = `spec.downloads.${id}.url`;
    return [
      error(
        'downloads.file-url-host',
        path,
        `${d.url} names host "${url.host}": a file: URL is a path on the machine that fetches it, not on another host`,
        `copy the file there and write file://${url.pathname} (three slashes), or serve it over https:// and give that URL`,
      ),
    ];
  });
