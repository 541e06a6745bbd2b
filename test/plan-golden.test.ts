import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertGolden } from './helpers/golden.js';
import { hasStackTrace, repoPath, runCli } from './helpers/cli.js';

const EXAMPLES = readdirSync(repoPath('examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

const KUBEINIT_CASES: readonly { name: string; argv: string[] }[] = [
  {
    name: 'kubeinit-libvirt-1-1-1-windows',
    argv: ['k8s-libvirt-1-1-1', '--nodes', '[[when_group=compute_nodes,os=windows]]'],
  },
  { name: 'kubeinit-libvirt-3-2-2', argv: ['k8s-libvirt-3-2-2', '--hypervisors', 'nyctea,tyto'] },
  {
    name: 'kubeinit-existing-1-2-1',
    argv: ['k8s-existing-1-2-1', '--nodes', '[{when_group: compute_nodes, os: windows-2025}]'],
  },
];

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'kubemix-plan-'));
}

async function planTo(
  argv: readonly string[],
  dir: string,
): Promise<{ planJson: string; stdout: string; stderr: string }> {
  const result = await runCli(['plan', ...argv, '--out', dir]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(hasStackTrace(result.stderr), false);
  return { planJson: readFileSync(join(dir, 'plan.json'), 'utf8'), stdout: result.stdout, stderr: result.stderr };
}

for (const example of EXAMPLES) {
  test(`golden plan: examples/${example}`, async () => {
    const dir = tmp();
    try {
      const { planJson, stdout, stderr } = await planTo([`examples/${example}`], dir);
      const name = example.replace(/\.yaml$/, '');
      assertGolden(`plans/${name}.plan.json`, planJson);
      assertGolden(`plans/${name}.txt`, `${stdout}--- stderr\n${stderr.replaceAll(dir, '<out>')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

for (const c of KUBEINIT_CASES) {
  test(`golden plan: ${c.argv.join(' ')}`, async () => {
    const dir = tmp();
    try {
      const { planJson } = await planTo(c.argv, dir);
      assertGolden(`plans/${c.name}.plan.json`, planJson);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the same input plans to byte-identical output, directory and all', async () => {
  const a = tmp();
  const b = tmp();
  try {
    await planTo(['examples/k8s-libvirt-3-2-1.yaml'], join(a, 'p'));
    await planTo(['examples/k8s-libvirt-3-2-1.yaml'], join(b, 'p'));
    assert.deepEqual(listTree(join(a, 'p')), listTree(join(b, 'p')));
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

test('both Kubeinit --nodes forms (and YAML/JSON lists) give byte-identical plans', async () => {
  const forms = [
    '[[when_group=compute_nodes,os=windows]]',
    '[{"when_group": "compute_nodes", "os": "windows"}]',
    '- when_group: compute_nodes\n  os: windows-2022\n',
  ];
  const plans: string[] = [];
  for (const nodes of forms) {
    const dir = tmp();
    try {
      plans.push((await planTo(['k8s-libvirt-1-2-1', '--nodes', nodes], dir)).planJson);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  assert.equal(plans[1], plans[0]);
  assert.equal(plans[2], plans[0]);
});

test('kubemix init writes a YAML spec that plans exactly like the Kubeinit string', async () => {
  const dir = tmp();
  try {
    const argv = [
      'k8s-libvirt-3-1-2',
      '--hypervisors',
      '[[ansible_host=nyctea],[ansible_host=tyto]]',
      '--nodes',
      '[[when_group=compute_nodes,os=windows,ram=16777216]]',
    ];
    const init = await runCli(['init', ...argv, '--out', join(dir, 'spec.yaml')]);
    assert.equal(init.code, 0, init.stderr);
    const spec = readFileSync(join(dir, 'spec.yaml'), 'utf8');
    assert.match(spec, /^# yaml-language-server: \$schema=/);
    const fromString = await planTo(argv, join(dir, 'a'));
    const fromFile = await planTo([join(dir, 'spec.yaml')], join(dir, 'b'));
    assert.equal(fromFile.planJson, fromString.planJson);
    const again = await runCli(['init', ...argv, '--out', join(dir, 'spec.yaml')]);
    assert.equal(again.code, 2, 'init refuses to overwrite without --force');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function listTree(dir: string, prefix = ''): [string, string][] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .sort((x, y) => (x.name < y.name ? -1 : 1))
    .flatMap((e): [string, string][] => {
      const rel = join(prefix, e.name);
      return e.isDirectory() ? [[rel, '<dir>'], ...listTree(dir, rel)] : [[rel, readFileSync(join(dir, rel), 'utf8')]];
    });
}
