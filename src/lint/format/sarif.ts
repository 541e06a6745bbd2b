// SARIF 2.1.0 for code scanning (GitHub, Azure DevOps). Every rule is listed
// in the driver so ruleIndex is stable; locations are repository-relative
// URIs when the input path was relative.
import { VERSION } from '../../version.js';
import type { Finding } from '../findings.js';
import type { Rule } from '../rules/types.js';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0-rtm.5.json';

function fileUri(path: string): string {
  const slashed = path.replace(/\\/g, '/');
  const encoded = slashed.split('/').map(encodeURIComponent).join('/');
  return slashed.startsWith('/') ? `file://${encoded}` : encoded.replace(/^\.\//, '');
}

function location(f: Finding): Record<string, unknown> {
  const physical: Record<string, unknown> = { artifactLocation: { uri: fileUri(f.file) } };
  if (f.line > 0) physical['region'] = { startLine: f.line, startColumn: f.column };
  const out: Record<string, unknown> = { physicalLocation: physical };
  if (f.object !== undefined) {
    const ns = f.object.namespace === undefined ? '' : `${f.object.namespace}/`;
    const container = f.container === undefined ? '' : `/${f.container}`;
    out['logicalLocations'] = [
      { fullyQualifiedName: `${f.object.kind}/${ns}${f.object.name}${container}`, kind: 'object' },
    ];
  }
  return out;
}

export function sarifReport(findings: readonly Finding[], rules: readonly Rule[]): Record<string, unknown> {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'kubemix',
            version: VERSION,
            rules: rules.map((r) => ({
              id: r.id,
              shortDescription: { text: r.why },
              help: { text: r.hint },
              defaultConfiguration: { level: r.severity },
              properties: { needsCluster: r.needsCluster, fixable: r.fixable },
            })),
          },
        },
        columnKind: 'utf16CodeUnits',
        results: findings.map((f) => ({
          ruleId: f.rule,
          ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
          level: f.severity,
          message: { text: f.message },
          locations: [location(f)],
          properties: {
            ...(f.hint === undefined ? {} : { hint: f.hint }),
            ...(f.container === undefined ? {} : { container: f.container }),
            ...(f.osSource === undefined ? {} : { imageOsSource: f.osSource }),
          },
        })),
      },
    ],
  };
}
