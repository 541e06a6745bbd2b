// upgrade's rewrite of the user's spec (#31): only the version scalar's bytes
// change — whatever else the file holds (BOM, CRLF, flow style, a comment with
// U+2028, quoting) stays byte for byte — and the file is written through a
// symlink to its target, in place when hard-linked, with its mode kept; a
// read-only spec is refused before any work, and a spec edited during the run
// is left alone with the line to change by hand.
import assert from 'node:assert/strict';
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { rewriteSpecFile, snapshotSpecFile } from '../src/cli/spec-rewrite.js';
import { InputError } from '../src/errors.js';
import { withKubernetesVersion } from '../src/spec/set-version.js';

const BODY = (v: string): string => `spec:\n  name: lab\n  kubernetes:\n    version: ${v}\n`;

/** [what, the spec text, the text expected after 1.36.3]: every byte but the version's kept. */
const TABLE: ReadonlyArray<readonly [string, string, string]> = [
  ['double-quoted', BODY('"1.35.4"'), BODY('"1.36.3"')],
  ['single-quoted', BODY("'1.35.4'"), BODY("'1.36.3'")],
  ['plain (becomes quoted: 1.40 would read as a float)', BODY('1.35.4 # pinned'), BODY('"1.36.3" # pinned')],
  ['CRLF line ends', BODY('"1.35.4"').replace(/\n/g, '\r\n'), BODY('"1.36.3"').replace(/\n/g, '\r\n')],
  ['a byte order mark', `\uFEFF${BODY('"1.35.4"')}`, `\uFEFF${BODY('"1.36.3"')}`],
  [
    'flow style',
    'spec: {name: lab, kubernetes: {version: "1.35.4", crictl: "1.36.0"}}\n',
    'spec: {name: lab, kubernetes: {version: "1.36.3", crictl: "1.36.0"}}\n',
  ],
  [
    'a comment holding U+2028',
    `# note\u2028still the comment\n${BODY('"1.35.4"')}`,
    `# note\u2028still the comment\n${BODY('"1.36.3"')}`,
  ],
  [
    'odd indentation and a trailing comment block',
    'spec:\n   kubernetes:   # k\n         version:    "1.35.4"   # v\n   name: lab\n# end\n',
    'spec:\n   kubernetes:   # k\n         version:    "1.36.3"   # v\n   name: lab\n# end\n',
  ],
];

describe('withKubernetesVersion keeps every byte but the version', () => {
  for (const [what, text, expected] of TABLE)
    it(what, () => assert.equal(withKubernetesVersion(text, '1.36.3', 'x.yaml'), expected));

  it('refuses a version that is an alias, naming the value to set by hand', () => {
    const text = 'x-v: &v "1.35.4"\nspec:\n  name: lab\n  kubernetes:\n    version: *v\n';
    assert.throws(
      () => withKubernetesVersion(text, '1.36.3', 'x.yaml'),
      (e: unknown) => e instanceof InputError && /alias/.test(e.message) && /"1\.36\.3" by hand/.test(e.hint ?? ''),
    );
  });
});

describe('the spec file as upgrade rewrites it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubemix-spec-rewrite-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const fresh = (text: string, mode = 0o640): string => {
    const path = join(dir, `spec-${++n}.yaml`);
    writeFileSync(path, text, { mode });
    chmodSync(path, mode);
    return path;
  };
  const rewrite = async (path: string): Promise<void> => {
    const snap = snapshotSpecFile(path, 'kubemix upgrade');
    await rewriteSpecFile(snap, withKubernetesVersion(snap.text, '1.36.3', path), 'set it by hand');
  };

  it('writes through a symlink: the target gets the version, the link stays a link', async () => {
    const target = fresh(BODY('"1.35.4"'));
    const link = join(dir, 'link.yaml');
    symlinkSync(target, link);
    await rewrite(link);
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(target, 'utf8'), BODY('"1.36.3"'));
  });

  it('keeps the mode and the inode of a hard-linked spec (both names see the new version)', async () => {
    const path = fresh(BODY('"1.35.4"'), 0o604);
    const other = join(dir, 'hardlink.yaml');
    linkSync(path, other);
    const inode = statSync(path).ino;
    await rewrite(path);
    assert.equal(statSync(path).ino, inode);
    assert.equal(statSync(path).mode & 0o777, 0o604);
    assert.equal(readFileSync(other, 'utf8'), BODY('"1.36.3"'));
  });

  it('keeps the mode of a spec with one name', async () => {
    const path = fresh(`\uFEFF${BODY('"1.35.4"')}`.replace(/\n/g, '\r\n'), 0o600);
    await rewrite(path);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(readFileSync(path, 'utf8'), `\uFEFF${BODY('"1.36.3"')}`.replace(/\n/g, '\r\n'));
  });

  it('refuses a read-only spec before any work (even as root), naming the file', () => {
    const path = fresh(BODY('"1.35.4"'), 0o444);
    assert.throws(
      () => snapshotSpecFile(path, 'kubemix upgrade'),
      (e: unknown) => e instanceof InputError && e.code === 'upgrade.spec-read-only' && e.message.includes(path),
    );
  });

  it('leaves a spec edited during the run alone and says what to set by hand', async () => {
    const path = fresh(BODY('"1.35.4"'));
    const snap = snapshotSpecFile(path, 'kubemix upgrade');
    writeFileSync(path, `${BODY('"1.35.4"')}# added while the upgrade ran\n`);
    await assert.rejects(
      rewriteSpecFile(
        snap,
        withKubernetesVersion(snap.text, '1.36.3', path),
        'set spec.kubernetes.version to "1.36.3"',
      ),
      (e: unknown) =>
        e instanceof InputError && e.code === 'upgrade.spec-changed' && /by hand|1\.36\.3/.test(e.hint ?? ''),
    );
    assert.equal(readFileSync(path, 'utf8'), `${BODY('"1.35.4"')}# added while the upgrade ran\n`);
  });
});
