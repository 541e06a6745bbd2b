// `kubemix kubeconfig SPEC`: the cluster's admin kubeconfig from the state
// directory, written 0600, optionally merged into ~/.kube/config.
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../../errors.js';
import { mergeKubeconfig, renameAdminKubeconfig } from '../../exec/kubeconfig.js';
import { outputFile, readInputFile, writeOutputFile, type OutputTarget, type PathRef } from '../../exec/local-paths.js';
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
  readonly force?: boolean;
}

/** A kubeconfig larger than this is not one kubemix should rewrite. */
const MAX_KUBECONFIG_BYTES = 16 * 1024 * 1024;

/**
 * Merges the cluster's entries into the user's kubeconfig: through a symbolic
 * link to its file, keeping its comments and owner, mode 0600 (it now holds
 * the admin's credentials; a wider mode is narrowed), after a copy of what it held
 * (FILE.kubemix-backup). An entry of the same name holding something else is
 * refused unless --force.
 */
async function mergeInto(ref: PathRef, ours: string, flags: Flags): Promise<{ path: string; backup?: string }> {
  const target: OutputTarget = outputFile(ref, true);
  const before =
    target.existing === undefined ? '' : readInputFile(ref, MAX_KUBECONFIG_BYTES, 'a kubeconfig').toString('utf8');
  const merged = mergeKubeconfig(before, ours, ref.given, {
    useContext: flags.use === true,
    replace: flags.force === true,
  });
  if (merged.clashes.length > 0 && flags.force !== true) {
    throw new InputError(
      'kubeconfig.clash',
      `${ref.given} already has ${merged.clashes.join(', ')} with other content; nothing was changed`,
      { path: ref.flag, hint: 'pass --force to replace them (the file is copied to FILE.kubemix-backup first)' },
    );
  }
  if (merged.text === before) return { path: target.path };
  let backup: string | undefined;
  if (target.existing !== undefined) {
    backup = `${target.path}.kubemix-backup`;
    const backupRef = { ...ref, given: backup };
    await writeOutputFile(backupRef, outputFile(backupRef, true), before, 0o600);
  }
  await writeOutputFile(ref, target, merged.text, 0o600);
  return backup === undefined ? { path: target.path } : { path: target.path, backup };
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
        .option('--use', "with --merge: make the cluster's context the current one")
        .option('--force', 'with --merge: replace entries of the same name that hold something else'),
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
      const given =
        typeof flags.merge === 'string'
          ? flags.merge
          : io.env.KUBECONFIG?.split(':')[0] || join(io.env.HOME ?? homedir(), '.kube', 'config');
      // The default place is made if missing, as kubectl does; a folder named by the user must exist.
      if (typeof flags.merge !== 'string')
        await mkdir(dirname(resolve(io.cwd, given)), { recursive: true, mode: 0o700 });
      const merged = await mergeInto({ flag: '--merge', given, cwd: io.cwd }, ours, flags);
      if (merged.backup !== undefined) out.log('info', `the file as it was: ${merged.backup}`);
      written.push(merged.path);
    }
    if (flags.out !== undefined || flags.merge === undefined) {
      const ref = { flag: '--out', given: flags.out ?? join(dir, 'kubeconfig'), cwd: io.cwd };
      await writeOutputFile(ref, outputFile(ref, true), ours, 0o600);
      written.push(resolve(io.cwd, ref.given));
    }
    if (out.json) out.document({ ok: true, written, context: loaded.clusterName });
    else for (const w of written) out.text(w);
  });
}
