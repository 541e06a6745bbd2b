// Hostile values in every string field the schema allows, in every bundled
// example: each must be refused at the spec boundary with that field's path,
// or reach every rendered artifact, task script and exported inventory only
// in the form its format's escaper gives it. The fields come from walking
// the zod schema (test/helpers/schema-leaves.ts), not from a list. URL
// fields get the payload in a #fragment and as user:password@ too. Every
// POSIX sh script the marker reached is then run, with every command a stub
// that records its argv (test/helpers/sh-sandbox.ts): the payload's command
// must never run, and an argument holding the marker must hold all of it.
// The scripts of `kubemix diagnose` (one per node) are among them; each of
// their sections runs as `timeout … sh -c SECTION`, and the sandbox runs
// such a nested script too, so every section's command is run as well.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml, parseAllDocuments, stringify } from 'yaml';
import { assembleDiagnosePlan, diagnosedNodes } from '../src/diagnose/plan.js';
import { InputError, InvalidSpecError } from '../src/errors.js';
import { renderInventory, inventoryOf } from '../src/interop/inventory/export.js';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { clusterSpecSchema } from '../src/spec/schema.js';
import { repoPath } from './helpers/cli.js';
import { slotsOf, stringLeaves, type Slot } from './helpers/schema-leaves.js';
import { runWithStubs } from './helpers/sh-sandbox.js';

const TOKEN = 'KMXMARK';
/** The command the payloads run if a shell ever reads them as code; the sandbox records every call of it. */
const PWN = 'kmxpwn';
/** Breaking in every format (quotes of each kind, command substitution, newline, `%` specifier, markup). */
export const PAYLOADS: readonly string[] = [
  `${TOKEN}'"$(${PWN} a)\`${PWN}\`;\n%n\u2019<&`,
  `${TOKEN}'"$(${PWN}$IFS/b)\u2019%n<&`,
  // What an http(s) URL may still hold after the boundary: no quotes or spaces, but `$(…)`, `;`, `%`.
  `${TOKEN}$(${PWN}$IFS/c);%n&`,
  // The review's root injection: quotes that pair up, so the text around a hand-built '…' still parses.
  `${TOKEN}'$(${PWN})'`,
];

/** The payload as a URL field may also carry it: in a #fragment, and as credentials. */
function urlForms(current: string, payload: string): string[] {
  const m = /^(https?:\/\/)(.*)$/.exec(current);
  if (m === null) return [];
  return [`${current}#${payload}`, `${m[1]}${TOKEN}$(${PWN}):p@${m[2]}`];
}

/** Optional sections the examples leave out, so their fields have a place to be injected. */
function enrich(doc: Record<string, unknown>, windows: boolean): void {
  const spec = doc['spec'] as Record<string, unknown>;
  spec['containerRuntime'] ??= {};
  spec['proxy'] = {
    http: 'http://proxy.example.com:3128/',
    https: 'http://proxy.example.com:3128/',
    noProxy: ['intranet.example'],
  };
  spec['mirrors'] = {
    images: { 'docker.io': 'mirror.example.com/docker' },
    artifacts: 'https://mirror.example.com/files/',
  };
  spec['services'] = { ...(spec['services'] as Record<string, unknown> | undefined), forwarders: ['192.0.2.53'] };
  // A user pin of one download: its id (the key), its URL and its hash all reach plans and scripts.
  spec['downloads'] = { 'linux/runc': { url: 'https://mirror.example.com/files/runc.amd64', sha256: 'a'.repeat(64) } };
  if (windows)
    spec['windows'] = {
      hostProcess: {
        flannelImage: 'registry.example.com/flannel:v1',
        kubeProxyImage: 'registry.example.com/kube-proxy:v1',
      },
    };
  // verify's probe images: they reach the images list, the registry's check script and the probe pods' manifests.
  spec['verify'] = {
    probeImages: {
      linux: 'registry.example.com/busybox:1.37.0',
      ltsc2022: 'registry.example.com/servercore:ltsc2022',
      ltsc2025: 'registry.example.com/servercore:ltsc2025',
    },
  };
  const infra = spec['infrastructure'] as { hypervisors?: Record<string, unknown>[] };
  for (const hv of infra.hypervisors ?? []) hv['bastion'] = { address: 'bastion.example.com', user: 'jump' };
  // A placement pin: node name → hypervisor name.
  const first = infra.hypervisors?.[0]?.['name'];
  if (typeof first === 'string') {
    const nodes = (spec['nodes'] ??= {}) as Record<string, unknown>;
    nodes['placement'] = { 'controller-01': first };
  }
}

type Format = 'sh' | 'powershell' | 'systemd' | 'ini' | 'toml' | 'yaml' | 'json' | 'xml' | 'opaque';

interface Output {
  readonly where: string;
  readonly format: Format;
  readonly text: string;
}

/** Whether a correct escaper for the format must change the payload (so the raw payload must not appear). */
const CHANGES: Record<'sh' | 'powershell' | 'systemd' | 'ini', (p: string) => boolean> = {
  sh: (p) => p.includes("'"),
  powershell: (p) => /['\u2018-\u201b]/.test(p),
  systemd: (p) => /[%"\\\n]/.test(p),
  ini: (p) => /['"\\\n]/.test(p),
};

function formatOf(path: string, text: string): Format {
  if (path.endsWith('.toml')) return 'toml';
  if (path.endsWith('.service') || path.includes('/systemd/')) return 'systemd';
  if (/\.ya?ml$/.test(path)) return 'yaml';
  if (path.endsWith('.xml')) return 'xml';
  if (path.endsWith('.ps1')) return 'powershell';
  if (path.endsWith('.sh')) return 'sh';
  try {
    JSON.parse(text);
    return 'json';
  } catch {
    /* not JSON */
  }
  const docs = parseAllDocuments(text);
  const yamlOk = (Array.isArray(docs) ? docs : [docs]).every(
    (d) => d.errors.length === 0 && typeof d.toJS() === 'object',
  );
  return yamlOk ? 'yaml' : 'opaque';
}

function outputsOf(doc: Record<string, unknown>): Output[] {
  const spec = readSpec({ kind: 'file', path: 'marker.yaml', text: stringify(doc) });
  const model = resolveModel(spec);
  const { plan, files } = assemblePlan(model);
  const out: Output[] = files.map((f) => ({
    where: `${f.node}:${f.remotePath}`,
    format: formatOf(f.remotePath, f.content),
    text: f.content,
  }));
  for (const t of plan.tasks) {
    for (const [kind, c] of [
      ['apply', t.apply],
      ['check', t.check],
    ] as const) {
      if (c !== null)
        out.push({ where: `${t.id} ${kind}`, format: c.shell === 'powershell' ? 'powershell' : 'sh', text: c.script });
    }
  }
  // What `kubemix diagnose` would run on every node of the cluster.
  for (const t of assembleDiagnosePlan(model, diagnosedNodes(model, undefined)).plan.tasks)
    out.push({
      where: `diagnose ${t.id}`,
      format: t.apply.shell === 'powershell' ? 'powershell' : 'sh',
      text: t.apply.script,
    });
  const inv = inventoryOf(model);
  out.push({ where: 'inventory.ini', format: 'ini', text: renderInventory(inv, 'ini', 'marker') });
  out.push({ where: 'inventory.yaml', format: 'yaml', text: renderInventory(inv, 'yaml', 'marker') });
  return out;
}

/** Strings (keys and values) of a parsed document. */
function strings(value: unknown, keys: string[], values: string[]): void {
  if (typeof value === 'string') values.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, keys, values);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      keys.push(k);
      strings(v, keys, values);
    }
  }
}

function parsed(o: Output): unknown[] {
  switch (o.format) {
    case 'toml':
      return [parseToml(o.text)];
    case 'json':
      return [JSON.parse(o.text)];
    case 'yaml':
      return parseAllDocuments(o.text).map((d) => {
        assert.deepEqual(d.errors, [], o.where);
        return d.toJS() as unknown;
      });
    case 'xml':
      return [
        new XMLParser({
          ignoreAttributes: false,
          processEntities: true,
          htmlEntities: true,
          parseTagValue: false,
          parseAttributeValue: false,
          trimValues: false,
        }).parse(o.text),
      ];
    default:
      return [];
  }
}

/**
 * Offsets of the marker in a shell script that are not inside '…' (POSIX
 * quoting: outside single quotes `$(`, `;` and `$IFS` are live).
 */
function unquotedInSh(script: string): number[] {
  const out: number[] = [];
  let state: 'none' | 'single' | 'double' = 'none';
  for (let i = 0; i < script.length; i++) {
    if (script.startsWith(TOKEN, i) && state !== 'single') out.push(i);
    const c = script[i];
    if (state === 'single') {
      if (c === "'") state = 'none';
    } else if (c === '\\') i++;
    else if (state === 'double') {
      if (c === '"') state = 'none';
    } else if (c === "'") state = 'single';
    else if (c === '"') state = 'double';
  }
  return out;
}

/** Problems with one output: the payload where its format would run or restructure it. */
function problems(o: Output, payload: string): string[] {
  if (!o.text.includes(TOKEN)) return [];
  if (o.format === 'opaque') return [`${o.where}: the marker reached a file of no known format`];
  if (o.format === 'sh' && unquotedInSh(o.text).length > 0)
    return [`${o.where}: the marker is outside single quotes in a shell script`];
  if (o.format in CHANGES) {
    return CHANGES[o.format as keyof typeof CHANGES](payload) && o.text.includes(payload)
      ? [`${o.where}: the payload is written unescaped (${o.format})`]
      : [];
  }
  const keys: string[] = [];
  const values: string[] = [];
  for (const d of parsed(o)) strings(d, keys, values);
  const out: string[] = [];
  if (keys.some((k) => k.includes(TOKEN))) out.push(`${o.where}: the marker became a ${o.format} key`);
  if (values.some((v) => v.includes(TOKEN) && !v.includes(payload)))
    out.push(`${o.where}: a ${o.format} value holds only part of the payload`);
  if (!values.some((v) => v.includes(TOKEN)))
    out.push(`${o.where}: the marker is in the ${o.format} text but in no value`);
  return out;
}

/** Each example as it is, and one without a services node: then nodes fetch downloads from their source URLs. */
const EXAMPLES: readonly { readonly file: string; readonly services: boolean }[] = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .flatMap((file) => [
    { file, services: true },
    ...(file === 'existing-host-gw.yaml' ? [{ file, services: false }] : []),
  ]);
const LEAVES = stringLeaves(clusterSpecSchema);

function baseDoc(example: { readonly file: string; readonly services: boolean }): Record<string, unknown> {
  const text = readFileSync(repoPath(`examples/${example.file}`), 'utf8');
  const doc = parseYaml(text) as Record<string, unknown>;
  enrich(doc, text.includes('windows-'));
  if (!example.services) {
    const spec = doc['spec'] as Record<string, unknown>;
    spec['services'] = { enabled: false };
  }
  return doc;
}

const nameOf = (e: { readonly file: string; readonly services: boolean }): string =>
  e.services ? e.file : `${e.file} (no services node)`;

test('the schema walk finds the string fields (sanity)', () => {
  const names = LEAVES.map((l) => l.join('.'));
  for (const want of [
    'spec.mirrors.artifacts',
    'spec.proxy.noProxy.[]',
    'spec.mirrors.images.{value}',
    'spec.infrastructure.hosts.[].bastion.user',
    'spec.downloads.{value}.url',
  ])
    assert.ok(names.includes(want), want);
});

test('the enriched examples plan as they are', () => {
  for (const example of EXAMPLES) {
    const outputs = outputsOf(baseDoc(example));
    assert.ok(outputs.length > 10, nameOf(example));
    // diagnose's scripts are among them (a Linux node's at least), so the payloads reach them when a field does.
    assert.ok(
      outputs.some((o) => o.where.startsWith('diagnose ') && o.format === 'sh'),
      `${nameOf(example)}: no diagnose script`,
    );
  }
});

/** An argument holding the marker holds the whole payload (as written, or percent-encoded by URL normalisation). */
function intact(arg: string, payload: string): boolean {
  if (arg.includes(payload)) return true;
  try {
    return decodeURIComponent(arg).includes(payload) || arg.includes(encodeURI(payload));
  } catch {
    return false;
  }
}

interface Ran {
  readonly where: string;
  readonly payload: string;
  readonly script: string;
}

test('every string field, every example, every payload: refused with its path, or escaped for every format it reaches; no sh script runs it', () => {
  const injected = new Set<string>();
  const failures: string[] = [];
  const toRun = new Map<string, Ran>();
  let accepted = 0;
  for (const example of EXAMPLES) {
    for (const leaf of LEAVES) {
      const count = slotsOf(baseDoc(example), leaf).length;
      for (let i = 0; i < count; i++) {
        const current = slotsOf(baseDoc(example), leaf)[i]?.current ?? '';
        const forms: [string, string][] = [
          ...PAYLOADS.map((p): [string, string] => [`${current}${p}`, p]),
          ...urlForms(current, PAYLOADS[2] ?? '').map((v): [string, string] => [v, v.slice(v.indexOf(TOKEN))]),
        ];
        for (const [value, payload] of forms) {
          const doc = baseDoc(example);
          const slot = slotsOf(doc, leaf)[i] as Slot;
          slot.set(doc, value);
          injected.add(leaf.join('.'));
          let outputs: Output[];
          try {
            outputs = outputsOf(doc);
          } catch (e) {
            if (process.env['KUBEMIX_MARKER_DEBUG'] !== undefined)
              process.stderr.write(
                `refused: ${nameOf(example)} ${slot.path} ${JSON.stringify(value)}: ${e instanceof InvalidSpecError ? JSON.stringify(e.diagnostics.map((d) => `${d.path} ${d.message}`)) : String(e)}\n`,
              );
            // Refused by the schema, or at plan time by an input error naming the field (URL credentials where
            // kubemix cannot keep them private: model/url-credentials.ts), both exit 2.
            const ok =
              (e instanceof InvalidSpecError &&
                e.diagnostics.some((d) => d.severity === 'error' && d.path.startsWith(slot.reportedAt))) ||
              (!(e instanceof InvalidSpecError) &&
                e instanceof InputError &&
                (e.path ?? '').startsWith(slot.reportedAt));
            if (!ok)
              failures.push(
                `${nameOf(example)} ${slot.path}: not refused at the spec boundary with its path: ${e instanceof InvalidSpecError ? JSON.stringify(e.diagnostics.map((d) => d.path)) : String(e)}`,
              );
            continue;
          }
          accepted++;
          if (process.env['KUBEMIX_MARKER_DEBUG'] !== undefined)
            process.stderr.write(`accepted: ${nameOf(example)} ${slot.path} ${JSON.stringify(value)}\n`);
          for (const o of outputs) {
            failures.push(
              ...problems(o, payload).map((p) => `${nameOf(example)} ${slot.path} ${JSON.stringify(payload)}: ${p}`),
            );
            if (o.format === 'sh' && o.text.includes(TOKEN) && !toRun.has(o.text))
              toRun.set(o.text, { where: `${nameOf(example)} ${slot.path} ${o.where}`, payload, script: o.text });
          }
        }
      }
    }
  }
  const ran = [...toRun.values()];
  const calls = runWithStubs(
    ran.map((r) => r.script),
    { nested: true },
  );
  let markerSeen = 0;
  ran.forEach((r, i) => {
    for (const c of calls[i] ?? []) {
      if ((c.argv[0] ?? '').startsWith(PWN)) failures.push(`${r.where}: the payload ran ${JSON.stringify(c.argv)}`);
      for (const arg of c.argv.filter((a) => a.includes(TOKEN))) {
        markerSeen++;
        if (!intact(arg, r.payload))
          failures.push(`${r.where}: ${c.argv[0] ?? ''} got a part of the payload: ${JSON.stringify(arg)}`);
      }
    }
  });
  assert.deepEqual(failures.slice(0, 20), []);
  const missed = LEAVES.map((l) => l.join('.')).filter((l) => !injected.has(l));
  assert.deepEqual(missed, [], 'schema string fields no example gives a place to inject into: extend enrich()');
  assert.ok(accepted > 0, 'no payload was accepted anywhere: the escaping half of the test never ran');
  assert.ok(
    ran.length > 0 && markerSeen > 0,
    'no script holding the marker ran, or no stub saw it: the run half never ran',
  );
});
