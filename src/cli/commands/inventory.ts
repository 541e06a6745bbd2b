// `kubemix inventory import FILE` (Ansible inventory → spec) and
// `kubemix inventory export SPEC` (spec → Ansible inventory).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError, InvalidSpecError } from '../../errors.js';
import { exportInventoryText } from '../../interop/inventory/export-text.js';
import { inventoryLocations, type ImportSource } from '../../interop/inventory/import-locations.js';
import { readInventory } from '../../interop/inventory/read.js';
import { inventoryToSpec } from '../../interop/inventory/to-spec.js';
import { resolveModel } from '../../model/resolve.js';
import { readSpec, type SpecResult } from '../../spec/read.js';
import { YAML_LIMITS } from '../../spec/yaml.js';
import type { CliIo } from '../io.js';
import { outputFor } from '../settings.js';
import { loadSpec, withSpecOptions, type SpecOptions } from '../spec-arg.js';
import { specYaml } from '../spec-yaml.js';

export function registerInventory(program: Command, io: CliIo): void {
  const inventory = program.command('inventory').description('Ansible inventories in (import) and out (export)');
  inventory
    .command('import')
    .description(
      'turn an Ansible inventory (INI or YAML; kubespray, kubernetes-for-windows) into an existing-hosts spec',
    )
    .argument('<FILE>', 'inventory file')
    .option('--out <FILE>', 'write the spec to FILE instead of stdout')
    .option('--force', 'overwrite FILE if it exists')
    .option('--name <NAME>', 'cluster name (default: from the inventory file name)')
    .action((file: string, opts: { out?: string; force?: boolean; name?: string }, command: Command) =>
      importCommand(file, opts, command, io),
    );
  withSpecOptions(
    inventory
      .command('export')
      .description('write an Ansible inventory of the planned cluster')
      .argument('<SPEC>', 'spec file, or Kubeinit spec string')
      .option('--format <FORMAT>', 'ini or yaml', 'ini')
      .option('--out <FILE>', 'write to FILE instead of stdout')
      .option('--force', 'overwrite FILE if it exists'),
  ).action((spec: string, opts: SpecOptions & { format: string; out?: string; force?: boolean }, command: Command) => {
    const out = outputFor(command, io);
    if (opts.format !== 'ini' && opts.format !== 'yaml')
      throw new InputError('flags.invalid', `--format ${opts.format}: use ini or yaml`, { path: '--format' });
    const loaded = loadSpec(spec, opts, io);
    const text = exportInventoryText(resolveModel(loaded), opts.format, loaded.source);
    emit(text, opts, io, out);
    for (const w of loaded.warnings) out.diagnostic(w);
  });
}

function importCommand(
  file: string,
  opts: { out?: string; force?: boolean; name?: string },
  command: Command,
  io: CliIo,
): void {
  const out = outputFor(command, io);
  if (opts.name !== undefined && !DNS_LABEL.test(opts.name)) {
    const message = `--name ${opts.name}: a cluster name is one DNS label (lower-case letters, digits and "-", at most 63)`;
    throw new InputError('flags.name', message, { path: '--name' });
  }
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(
      'inventory.unreadable',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      { path: file },
    );
  }
  const name = opts.name ?? clusterNameFrom(file);
  const imported = inventoryToSpec(readInventory(text, file), name);
  const target = opts.out === undefined ? undefined : resolve(io.cwd, opts.out);
  const yaml = specYaml(imported.document, target);
  const source = { file, origins: imported.origins, ...(opts.name === undefined ? {} : { nameFlag: '--name' }) };
  const checked = checkImported(yaml, source);
  emit(yaml, opts, io, out, imported.document);
  // The inventory's own even-control-plane warning names the inventory line; the spec's would repeat it.
  const specWarnings = checked.warnings.filter((w) => w.code !== 'nodes.even-control-plane');
  for (const w of [...imported.warnings, ...inventoryLocations(specWarnings, source)]) out.diagnostic(w);
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The generated spec goes through the same validation as a hand-written one;
 * what it finds is reported at the inventory lines (or flag) it came from.
 */
function checkImported(yaml: string, source: ImportSource): SpecResult {
  const bytes = Buffer.byteLength(yaml, 'utf8');
  if (bytes > YAML_LIMITS.maxBytes) {
    const message = `the spec generated from ${source.file} would be ${bytes} bytes, more than the ${YAML_LIMITS.maxBytes} a spec file may hold`;
    throw new InputError('inventory.spec-too-large', message, {
      path: source.file,
      hint: 'import fewer hosts, or shorter host vars',
    });
  }
  try {
    return readSpec({ kind: 'file', path: source.file, text: yaml });
  } catch (error) {
    if (!(error instanceof InvalidSpecError)) throw error;
    throw new InvalidSpecError(source.file, inventoryLocations(error.diagnostics, source));
  }
}

function emit(
  text: string,
  opts: { out?: string; force?: boolean },
  io: CliIo,
  out: ReturnType<typeof outputFor>,
  document?: unknown,
): void {
  if (opts.out !== undefined) {
    const target = resolve(io.cwd, opts.out);
    if (existsSync(target) && opts.force !== true)
      throw new InputError('output.exists', `${opts.out} already exists`, {
        path: '--out',
        hint: 'pass --force to overwrite it',
      });
    writeFileSync(target, text);
    out.log('info', `wrote ${opts.out}`);
  }
  if (out.json)
    out.document({ ok: true, ...(opts.out === undefined ? { output: document ?? text } : { written: opts.out }) });
  else if (opts.out === undefined) out.text(text);
}

/** `inventory/kubernetes.ini` → `kubernetes`; something that is no DNS label → `imported`. */
export function clusterNameFrom(file: string): string {
  const stem = basename(file)
    .replace(/\.[^.]*$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(stem) && !['hosts', 'inventory'].includes(stem) ? stem : 'imported';
}
