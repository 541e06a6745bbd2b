// Golden files: everything a Windows worker gets, per Kubernetes minor ×
// Windows build × backend (pairwise), and with Calico per minor on Windows
// Server 2022 (with the cluster's calico.yaml). UPDATE_GOLDEN=1 rewrites them.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assemblePlan } from '../../src/plan/assemble.js';
import { WINDOWS_NODES } from '../../src/render/types.js';
import { CALICO_COMBOS, GOLDEN_COMBOS, HOSTPROCESS_COMBOS, comboName, modelFor, type Combo } from './fixtures.js';

// dist/test/windows → the repository's test/golden/windows.
const GOLDEN_DIR = fileURLToPath(new URL('../../../test/golden/windows/', import.meta.url));

function render(c: Combo): string {
  const { plan, files } = assemblePlan(modelFor(c));
  const out: string[] = [];
  for (const t of plan.tasks.filter((x) => x.host === 'win-01')) {
    out.push(
      `### task ${t.id}`,
      `# ${t.description}`,
      `# after: ${t.after.join(', ')}`,
      `# uploads: ${t.uploads.map((u) => u.artifact).join(', ')}`,
      `# secrets: ${t.secrets.join(', ')}`,
    );
    if (t.check !== null) out.push('--- check', t.check.script.trimEnd());
    out.push('--- apply', t.apply.script.trimEnd(), '');
  }
  // Install media (Autounattend.xml and its script, on the hypervisor) have golden files of their own (unattend.test.ts).
  // The helpers file: one artifact every Windows node uploads.
  const mine = (x: { node: string; remotePath: string }): boolean =>
    x.node === 'win-01' ||
    x.node === WINDOWS_NODES ||
    (x.node === 'cluster' &&
      (x.remotePath === 'manifests/windows-hostprocess.yaml' || x.remotePath === 'manifests/calico.yaml'));
  for (const f of files.filter(mine)) out.push(`### file ${f.remotePath}`, f.content.trimEnd(), '');
  return `${out.join('\n')}\n`;
}

describe('Windows golden files', () => {
  for (const c of [...GOLDEN_COMBOS, ...HOSTPROCESS_COMBOS, ...CALICO_COMBOS]) {
    it(comboName(c), () => {
      const path = `${GOLDEN_DIR}${comboName(c)}.txt`;
      const actual = render(c);
      if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(path)) {
        mkdirSync(GOLDEN_DIR, { recursive: true });
        writeFileSync(path, actual);
      }
      assert.equal(
        actual,
        readFileSync(path, 'utf8'),
        `${path} differs: rerun with UPDATE_GOLDEN=1 after checking the change`,
      );
      assert.equal(render(c), actual, 'rendering is deterministic');
    });
  }
});
