// Where a cluster's state lives, and its layout (0700):
//   journal.json journal.log  secrets.json (0600)  known_hosts  lock  logs/<host>.log
//   facts/<host>/  down/ (the reset plan's own journal while `down` runs)
// One resolver: --state-dir > $KUBEMIX_STATE_DIR > <beside>/.kubemix/<cluster>/,
// where `beside` is the spec file's directory (the working directory for a
// Kubeinit string) or the plan directory's parent.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { ensurePrivateDir } from './durable.js';

export const STATE_DIR_ENV = 'KUBEMIX_STATE_DIR';

export interface StateDirChoice {
  /** --state-dir as given; undefined when the flag is absent. */
  readonly flag: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/**
 * The state directory the user chose (absolute), or undefined when neither
 * the flag nor the variable names one. An empty --state-dir is a mistake (a
 * variable that expanded to nothing): refused, not silently replaced by a
 * default. An empty KUBEMIX_STATE_DIR counts as unset, as `VAR=` usually means.
 */
export function chosenStateDir(choice: StateDirChoice): string | undefined {
  if (choice.flag !== undefined) {
    if (choice.flag.trim() === '') {
      throw new InputError('flags.state-dir', '--state-dir is empty', {
        path: '--state-dir',
        hint: 'give a directory, or leave the flag out for the default .kubemix/<cluster>',
      });
    }
    return resolve(choice.cwd, choice.flag);
  }
  const fromEnv = choice.env[STATE_DIR_ENV];
  return fromEnv === undefined || fromEnv === '' ? undefined : resolve(choice.cwd, fromEnv);
}

/** --state-dir > KUBEMIX_STATE_DIR > `<beside>/.kubemix/<cluster>`. */
export function resolveStateDir(
  choice: StateDirChoice & { readonly cluster: string; readonly beside: string },
): string {
  return chosenStateDir(choice) ?? join(resolve(choice.cwd, choice.beside), '.kubemix', choice.cluster);
}

export interface StatePaths {
  readonly root: string;
  readonly journal: string;
  /** Records appended since journal.json was last written (see journal.ts). */
  readonly journalLog: string;
  readonly secrets: string;
  readonly knownHosts: string;
  readonly logs: string;
  readonly facts: string;
  /** The reset plan's own state: the deploy journal stays readable until the reset is through. */
  readonly reset: string;
}

export function statePaths(root: string): StatePaths {
  return {
    root,
    journal: join(root, 'journal.json'),
    journalLog: join(root, 'journal.log'),
    secrets: join(root, 'secrets.json'),
    knownHosts: join(root, 'known_hosts'),
    logs: join(root, 'logs'),
    facts: join(root, 'facts'),
    reset: join(root, 'down'),
  };
}

/**
 * Makes the state directory and its folders 0700 where they are missing. A
 * directory that exists is never chmod'ed: `--state-dir /tmp` (or a folder
 * the user shares on purpose) is not kubemix's to change.
 */
export async function prepareStateDir(root: string): Promise<StatePaths> {
  const paths = statePaths(root);
  await ensurePrivateDir(root);
  await ensurePrivateDir(paths.logs);
  await ensurePrivateDir(paths.facts);
  return paths;
}

/**
 * After a complete reset the cluster is gone: the journal and the reset's own
 * state go, so `status` starts from "never run". Secrets (the CA), host keys
 * and logs stay for a re-deploy.
 */
export async function forgetDeployment(root: string): Promise<void> {
  const paths = statePaths(root);
  await rm(paths.journal, { force: true });
  await rm(paths.journalLog, { force: true });
  await rm(paths.reset, { recursive: true, force: true });
}
