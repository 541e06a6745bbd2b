// No secret value ever lands in plan.json or an artifact: secrets are
// `{{secret:NAME}}` references, declared by the task that uses them, and
// nothing in a plan looks like key material or a password hash.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SECRET_NAMES, sshHostKeySecret } from '../src/model/secret-names.js';
import { SHAPES, planFor } from './helpers/shapes.js';

// The executor's own grammar for a reference (src/exec/secrets.ts).
const REFERENCE = /\{\{secret:([A-Za-z0-9_.-]+)\}\}/g;
// PEM private keys, bcrypt/apr1/SHA-crypt hashes, bootstrap tokens.
const MATERIAL = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\$(2[aby]|apr1|[56])\$[./A-Za-z0-9]{8,}/,
  /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/,
];

describe('secrets stay out of plans', () => {
  for (const shape of SHAPES) {
    const { plan, files } = planFor(shape);
    const json = JSON.stringify(plan);

    it(`${shape}: plan.json and artifacts hold no key material or password hash`, () => {
      for (const [where, text] of [
        ['plan.json', json],
        ...files.map((f) => [f.localPath, f.content] as const),
      ] as const) {
        for (const pattern of MATERIAL) assert.doesNotMatch(text, pattern, `${where} matches ${pattern}`);
      }
    });

    it(`${shape}: every secret a task or its uploads refer to is declared by it; artifacts naming one are 0600`, () => {
      for (const t of plan.tasks) {
        const used = new Set([...`${t.check?.script ?? ''}${t.apply.script}`.matchAll(REFERENCE)].map((m) => m[1]));
        const uploaded = files.filter((f) => t.uploads.some((u) => u.artifact === `${f.node}:${f.remotePath}`));
        for (const f of uploaded) for (const m of f.content.matchAll(REFERENCE)) used.add(m[1]);
        assert.deepEqual([...used].sort(), [...t.secrets], t.id);
      }
      // The executor fills references in uploads and writes them 0600: an
      // artifact that names a secret must be 0600 and its uploader must declare it.
      for (const f of files) {
        const named = [...f.content.matchAll(REFERENCE)].map((m) => m[1] ?? '');
        if (named.length === 0) continue;
        assert.equal(f.mode, '0600', f.localPath);
        if (f.remotePath.endsWith('/Autounattend.xml')) {
          // A Windows VM's install media: on its hypervisor, naming only the secrets a driver generates.
          const node = /\/([^/.]+)\.[^/]+\/unattend\//.exec(f.remotePath)?.[1] ?? '';
          const known = [SECRET_NAMES.windowsAdminPassword, SECRET_NAMES.clusterSshPublicKey, sshHostKeySecret(node)];
          for (const name of named)
            assert.ok(known.includes(name), `${f.localPath} names ${name}, which no driver provides`);
        }
        const uploaders = plan.tasks.filter((t) => t.uploads.some((u) => u.artifact === `${f.node}:${f.remotePath}`));
        assert.ok(uploaders.length > 0, `${f.localPath} is uploaded by no task`);
        for (const t of uploaders)
          for (const name of named)
            assert.ok(t.secrets.includes(name), `${t.id} uploads ${f.localPath} but does not declare ${name}`);
      }
    });
  }
});
