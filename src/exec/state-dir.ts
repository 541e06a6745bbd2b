// Where a cluster's state lives: --state-dir > $KUBEMIX_STATE_DIR >
// <plan dir>/../.kubemix/<cluster>/. Layout (0700):
//   journal.json  secrets.json (0600)  known_hosts  lock  logs/<host>.log  facts/<host>/
import { chmod } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ensurePrivateDir } from './durable.js';

export function resolveStateDir(flag: string | undefined, env: Readonly<Record<string, string | undefined>>, planDir: string, cluster: string, cwd: string): string {
  if (flag !== undefined && flag !== '') return resolve(cwd, flag);
  const fromEnv = env['KUBEMIX_STATE_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(cwd, fromEnv);
  return join(dirname(resolve(cwd, planDir)), '.kubemix', cluster);
}

export interface StatePaths {
  readonly root: string;
  readonly journal: string;
  readonly secrets: string;
  readonly knownHosts: string;
  readonly logs: string;
  readonly facts: string;
}

export function statePaths(root: string): StatePaths {
  return { root, journal: join(root, 'journal.json'), secrets: join(root, 'secrets.json'), knownHosts: join(root, 'known_hosts'), logs: join(root, 'logs'), facts: join(root, 'facts') };
}

export async function prepareStateDir(root: string): Promise<StatePaths> {
  const paths = statePaths(root);
  await ensurePrivateDir(root);
  await chmod(root, 0o700);
  await ensurePrivateDir(paths.logs);
  await ensurePrivateDir(paths.facts);
  return paths;
}
