// SPEC, wherever a command takes one: a YAML spec file, or a Kubeinit spec
// string plus --hypervisors and --nodes. An existing file wins.
import { lstatSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
import { inputFile, readInputFile } from '../exec/local-paths.js';
import { looksLikeKubeinitSpec } from '../spec/kubeinit.js';
import { readSpec, type SpecResult } from '../spec/read.js';
import type { CliIo } from './io.js';

export interface SpecOptions {
  readonly hypervisors?: string;
  readonly nodes?: string;
}

/** Adds --hypervisors and --nodes to a command that takes SPEC. */
export function withSpecOptions(command: Command): Command {
  return command
    .option(
      '--hypervisors <list>',
      'Kubeinit string only: hypervisor addresses, "a,b" or [[ansible_host=a],[ansible_host=b]]',
    )
    .option(
      '--nodes <overrides>',
      'Kubeinit string only: node overrides, [[when_group=compute_nodes,os=windows]] or a JSON/YAML list',
    );
}

export interface LoadedSpec extends SpecResult {
  /** Absolute path of the spec file; undefined for a Kubeinit string. */
  readonly file: string | undefined;
  /** The cluster's name (metadata.name): it names the state directory, needed before any model is resolved. */
  readonly clusterName: string;
}

/** Read at most this much of a spec file; the YAML reader's own, smaller limit then names the file:line. */
const MAX_SPEC_READ = 16 * 1024 * 1024;

export function loadSpec(arg: string, options: SpecOptions, io: CliIo): LoadedSpec {
  const path = resolve(io.cwd, arg);
  const present = somethingAt(path);
  // A Kubeinit string wins over anything at that path but a regular file.
  if (present === 'file' || (present === 'other' && !looksLikeKubeinitSpec(arg))) {
    for (const flag of ['hypervisors', 'nodes'] as const) {
      if (options[flag] !== undefined) {
        throw new InputError(
          'flags.kubeinit-only',
          `--${flag} applies to Kubeinit spec strings; ${arg} is a spec file`,
          { path: `--${flag}`, hint: 'put these settings in the spec file instead' },
        );
      }
    }
    const ref = { flag: 'SPEC', given: arg, cwd: io.cwd, code: 'spec.path' };
    const text = readInputFile(
      ref,
      MAX_SPEC_READ,
      'a spec file',
      'give a YAML spec file or a Kubeinit string',
    ).toString('utf8');
    return loaded(readSpec({ kind: 'file', path: arg, text }), path);
  }
  if (!looksLikeKubeinitSpec(arg) && /[/\\]|\.ya?ml$|\.json$/i.test(arg)) {
    // Says why (a missing folder, a file where a folder belongs, a dangling link) when it can.
    inputFile({ flag: 'SPEC', given: arg, cwd: io.cwd, code: 'spec.not-found' }, HINT_NOT_FOUND);
  }
  return loaded(
    readSpec({ kind: 'kubeinit', spec: arg, hypervisors: options.hypervisors, nodes: options.nodes }),
    undefined,
  );
}

const HINT_NOT_FOUND = 'give the path of a YAML spec, or a Kubeinit string such as k8s-libvirt-1-1-1';

function loaded(result: SpecResult, file: string | undefined): LoadedSpec {
  // The CLI's one read of the raw spec: the name its state directory is found by; all else goes through the model.
  // eslint-disable-next-line kubemix/resolved-model -- the name is needed before (and without) a model
  return { ...result, file, clusterName: result.spec.name };
}

/** What is at `path`: a regular file (through links), something else (a directory, FIFO, dangling link, loop…), or nothing. */
function somethingAt(path: string): 'file' | 'other' | 'none' {
  try {
    if (statSync(path).isFile()) return 'file';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return lstatOrUndefined(path) === undefined ? 'none' : 'other';
  }
  return 'other';
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}
