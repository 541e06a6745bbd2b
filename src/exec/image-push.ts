// Task.pushesImages: before the services registry's check, the bundles given
// to `kubemix up --images` are pushed into it from the deployer, through an
// SSH tunnel to the services node (the registry listens there; the deployer
// may have no route to it), over TLS verified against the cluster CA, with
// the registry's htpasswd credential from the secret store (never on a
// command line, in the plan or the journal). What went in is recorded in the
// state directory (`images.json`), so a later `up` knows the registry has it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostError } from '../errors.js';
import { openBundle } from '../images/open.js';
import { pushBundles } from '../images/push.js';
import { SERVICES } from '../matrix/index.js';
import { SECRET_NAMES } from '../model/secret-names.js';
import type { Task } from '../plan/types.js';
import { DistributionClient } from '../registry/distribution.js';
import type { HostTransport } from '../transport/types.js';
import type { RunContext } from './context.js';
import { writeFileDurable } from './durable.js';

export interface ImageOptions {
  /** `up --images DIR|FILE…`. */
  readonly bundles: readonly string[];
}

/** The image names (with their digests) the state directory says the services registry holds. */
export async function pushedImages(stateRoot: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(join(stateRoot, 'images.json'), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

export async function pushImages(task: Task, ctx: RunContext, t: HostTransport): Promise<number> {
  const target = task.pushesImages;
  const bundles = ctx.images?.bundles ?? [];
  if (target === undefined || bundles.length === 0) return 0;
  if (t.tunnel === undefined)
    throw new HostError('images.no-tunnel', `${task.id}: the transport to ${task.host} cannot open a tunnel`, {
      path: task.id,
    });
  const tunnel = t.tunnel.bind(t);
  const ca = ctx.secrets.get(SECRET_NAMES.clusterCaCert);
  const password = ctx.secrets.get(SECRET_NAMES.registryPassword);
  if (ca === undefined || password === undefined)
    throw new HostError('secret.missing', `${task.id}: the cluster CA or the registry password is not known yet`, {
      path: task.id,
    });
  const client = new DistributionClient({
    host: target.registry,
    credential: { username: SERVICES.registryUser, password },
    ca: [ca],
    timeoutMs: 600_000,
    signal: ctx.signal,
    // The registry listens on the services node; its certificate names target.registry.
    dial: () => tunnel('127.0.0.1', target.port),
  });
  const opened = [];
  for (const b of bundles) opened.push(await openBundle(b));
  const pushed = (await ctx.imagesRecord?.read()) ?? {};
  const report = await pushBundles(opened, client, {
    report: (e) => {
      if (e.kind === 'image') {
        pushed[e.name] = e.digest;
        ctx.bus.emit({
          type: 'download',
          id: e.name,
          action: e.action === 'pushed' ? 'uploaded' : 'cached',
          sha256: e.digest.replace(/^sha256:/, ''),
          host: task.host,
        });
      }
    },
  });
  await ctx.imagesRecord?.write(pushed);
  return report.blobsUploaded + report.manifestsPut;
}

/** The state directory's record of what the services registry holds. */
export function imagesRecord(stateRoot: string): NonNullable<RunContext['imagesRecord']> {
  return {
    read: () => pushedImages(stateRoot),
    write: (r) => writeFileDurable(join(stateRoot, 'images.json'), `${JSON.stringify(r, null, 2)}\n`, 0o600),
  };
}
