// `kubemix kubeconfig SPEC`: the cluster's admin kubeconfig from the state
// directory, written 0600, optionally merged into ~/.kube/config.
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { writeFileDurable } from '../../exec/durable.js';
import { mergeKubeconfig, renameAdminKubeconfig } from '../../exec/kubeconfig.js';
import { SecretStore } from '../../exec/secrets.js';
import { statePaths } from '../../exec/state-dir.js';
import { SECRET_NAMES } from '../../model/secret-names.js';
import { withStateDirOption } from '../executor-flags.js';
import type { CliIo } from '../io.js';
import { outputFor, stateDir } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';

interface Flags extends SpecOptions {
  readonly stateDir?: string;
  readonly out?: string;
  readonly merge?: boolean | string;
  readonly use?: boolean;
}

async function readOptional(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

export function registerKubeconfig(program: Command, io: CliIo): void {
  withStateDirOption(
    withSpecOptions(
      program
        .command('kubeconfig')
        .description('write the admin kubeconfig (0600) from the state directory; --merge adds it to ~/.kube/config')
        .argument('<SPEC>', 'spec file or Kubeinit string')
        .option('--out <file>', 'where to write it (default <state dir>/kubeconfig)')
        .option(
          '--merge [file]',
          'merge into this kubeconfig (default: the first path of $KUBECONFIG, else ~/.kube/config) with a context named after the cluster',
        )
        .option('--use', "with --merge: make the cluster's context the current one"),
    ),
  ).action(async (spec: string, flags: Flags, command: Command) => {
    const out = outputFor(command, io);
    const loaded = loadSpec(spec, flags, io);
    const dir = stateDir(flags.stateDir, io, loaded.clusterName, loaded.file);
    const admin = (await SecretStore.open(statePaths(dir).secrets)).get(SECRET_NAMES.adminKubeconfig);
    if (admin === undefined) {
      throw new InputError('kubeconfig.missing', `no admin kubeconfig in ${dir} yet`, {
        hint: 'it is captured when `kubemix up SPEC` initialises the first controller',
      });
    }
    const ours = renameAdminKubeconfig(admin, loaded.clusterName);
    const written: string[] = [];
    if (flags.merge !== undefined) {
      const target =
        typeof flags.merge === 'string'
          ? resolve(io.cwd, flags.merge)
          : io.env.KUBECONFIG?.split(':')[0] || join(io.env.HOME ?? homedir(), '.kube', 'config');
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFileDurable(
        target,
        mergeKubeconfig(await readOptional(target), ours, target, flags.use === true),
        0o600,
      );
      written.push(target);
    }
    if (flags.out !== undefined || flags.merge === undefined) {
      const target = flags.out === undefined ? join(dir, 'kubeconfig') : resolve(io.cwd, flags.out);
      await writeFileDurable(target, ours, 0o600);
      written.push(target);
    }
    if (out.json) out.document({ ok: true, written, context: loaded.clusterName });
    else for (const w of written) out.text(w);
  });
}
