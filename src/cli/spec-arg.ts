// SPEC, wherever a command takes one: a YAML spec file, or a Kubeinit spec
// string plus --hypervisors and --nodes. An existing file wins.
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../errors.js';
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

export function loadSpec(arg: string, options: SpecOptions, io: CliIo): LoadedSpec {
  const path = resolve(io.cwd, arg);
  if (isFile(path)) {
    for (const flag of ['hypervisors', 'nodes'] as const) {
      if (options[flag] !== undefined) {
        throw new InputError(
          'flags.kubeinit-only',
          `--${flag} applies to Kubeinit spec strings; ${arg} is a spec file`,
          { path: `--${flag}`, hint: 'put these settings in the spec file instead' },
        );
      }
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new InputError(
        'spec.unreadable',
        `cannot read ${arg}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        { path: arg },
      );
    }
    return loaded(readSpec({ kind: 'file', path: arg, text }), path);
  }
  if (!looksLikeKubeinitSpec(arg) && /[/\\]|\.ya?ml$|\.json$/i.test(arg)) {
    throw new InputError('spec.not-found', `spec file ${arg} does not exist`, {
      path: arg,
      hint: 'give the path of a YAML spec, or a Kubeinit string such as k8s-libvirt-1-1-1',
    });
  }
  return loaded(
    readSpec({ kind: 'kubeinit', spec: arg, hypervisors: options.hypervisors, nodes: options.nodes }),
    undefined,
  );
}

function loaded(result: SpecResult, file: string | undefined): LoadedSpec {
  // The CLI's one read of the raw spec: the name its state directory is found by; all else goes through the model.
  // eslint-disable-next-line kubemix/resolved-model -- the name is needed before (and without) a model
  return { ...result, file, clusterName: result.spec.name };
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
