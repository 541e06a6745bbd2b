// readSpec: text in (a YAML file's content or a Kubeinit string), a validated
// ClusterSpec out — schema → defaults → named cross-field rules, with every
// problem collected before failing. Pure: the CLI reads files.
import { InvalidSpecError, type Diagnostic } from '../errors.js';
import { kubeinitToSpecDocument, type KubeinitInput } from './kubeinit.js';
import { normalise } from './normalise.js';
import { draftNodes, type NodeDraft } from './nodes.js';
import { runRules } from './rules/index.js';
import { parseSpecSchema } from './parse.js';
import { issuesToDiagnostics } from './schema-diagnostics.js';
import type { ClusterSpec } from './types.js';
import { loadYaml, locate, type LoadedYaml } from './yaml.js';

/**
 * The most nodes one spec may make: the largest plan measured (docs/scale.md,
 * 5000 nodes). Counted from the counts before any node is made, so a small
 * spec asking for 60 000 is refused in milliseconds, not planned until memory
 * runs out.
 */
export const MAX_NODES = 5000;

function nodeCountOver(spec: ClusterSpec): Diagnostic | undefined {
  const total =
    spec.driver === 'existing'
      ? spec.hosts.length
      : spec.controlPlane.count + spec.workers.reduce((sum, g) => sum + g.count, 0) + 1;
  if (total <= MAX_NODES) return undefined;
  return {
    code: 'nodes.too-many',
    severity: 'error',
    path: spec.driver === 'existing' ? 'spec.infrastructure.hosts' : 'spec.nodes',
    message: `the spec makes ${total} nodes, more than the ${MAX_NODES} one cluster may have`,
    hint: 'split the machines into several clusters, or lower the counts',
  };
}

/** At most this many errors are reported for one input. */
export const MAX_ERRORS = 50;

export type SpecSource =
  | { readonly kind: 'file'; readonly path: string; readonly text: string }
  | ({ readonly kind: 'kubeinit' } & KubeinitInput);

export interface SpecResult {
  readonly spec: ClusterSpec;
  readonly nodes: readonly NodeDraft[];
  /** The spec document as written (or as generated from a Kubeinit string). */
  readonly document: Record<string, unknown>;
  readonly warnings: readonly Diagnostic[];
  /** The file path, or the Kubeinit string. */
  readonly source: string;
}

export function readSpec(source: SpecSource): SpecResult {
  const name = source.kind === 'file' ? source.path : source.spec;
  const loaded = loadDocument(source);
  if (!loaded.ok) throw new InvalidSpecError(name, loaded.diagnostics);
  const { document, yaml } = loaded;
  const parsed = parseSpecSchema(document);
  if (!parsed.success) {
    const diagnostics = issuesToDiagnostics(parsed.error.issues, parsed.schema, document);
    throw new InvalidSpecError(name, bound(withLocations(diagnostics, yaml, name)));
  }
  const spec = normalise(parsed.data);
  const tooMany = nodeCountOver(spec);
  if (tooMany !== undefined) throw new InvalidSpecError(name, withLocations([tooMany], yaml, name));
  const nodes = draftNodes(spec);
  const diagnostics = runRules({ document, parsed: parsed.data, spec, nodes });
  if (diagnostics.some((d) => d.severity === 'error'))
    throw new InvalidSpecError(name, bound(withLocations(diagnostics, yaml, name)));
  return { spec, nodes, document, warnings: withLocations(diagnostics, yaml, name), source: name };
}

type Loaded =
  { ok: true; document: Record<string, unknown>; yaml?: LoadedYaml } | { ok: false; diagnostics: Diagnostic[] };

function loadDocument(source: SpecSource): Loaded {
  if (source.kind === 'kubeinit') {
    const result = kubeinitToSpecDocument(source);
    return result.ok ? { ok: true, document: result.value } : result;
  }
  const result = loadYaml(source.text, source.path);
  if (!result.ok) return result;
  const value = result.yaml.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      ok: false,
      diagnostics: [
        {
          code: 'spec.not-a-mapping',
          severity: 'error',
          path: source.path,
          message: 'a spec file must hold one YAML mapping (apiVersion, kind, metadata, spec)',
        },
      ],
    };
  }
  return { ok: true, document: value as Record<string, unknown>, yaml: result.yaml };
}

function withLocations(diagnostics: Diagnostic[], yaml: LoadedYaml | undefined, source: string): Diagnostic[] {
  if (yaml === undefined) return diagnostics;
  return diagnostics.map((d) => {
    const location = locate(yaml, source, pathParts(d.path));
    return location === undefined ? d : { ...d, location };
  });
}

/** `spec.nodes.workers[0].os` → ['spec', 'nodes', 'workers', 0, 'os']. */
function pathParts(path: string): (string | number)[] {
  return path
    .split(/\.|\[(\d+)\]/)
    .filter((p) => p !== undefined && p !== '')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function bound(diagnostics: Diagnostic[]): Diagnostic[] {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  if (errors.length <= MAX_ERRORS) return diagnostics;
  const kept = errors.slice(0, MAX_ERRORS);
  return [
    ...kept,
    {
      code: 'spec.too-many-errors',
      severity: 'error',
      path: '(spec)',
      message: `${errors.length - MAX_ERRORS} more errors not shown`,
    },
  ];
}
