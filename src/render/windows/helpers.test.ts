import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DOT_SOURCE_HELPERS, HELPERS_CONTENT, HELPER_NAMES, withHelpersFile } from './helpers.js';
import { ACL_FUNCTIONS, HNS_FUNCTIONS, SERVICE_FUNCTIONS } from './ps.js';
import { REMOVE_TREE_FUNCTION } from './reset.js';

describe('withHelpersFile', () => {
  it('dot-sources the file instead of the helpers it holds, keeps the others inline, in order', () => {
    const body = "Remove-KubemixTree -Path 'C:\\x'\nStop-KubemixService -Name 'kubelet'\n";
    const out = withHelpersFile(`${SERVICE_FUNCTIONS}${REMOVE_TREE_FUNCTION}${body}`);
    assert.equal(out, `${DOT_SOURCE_HELPERS}${REMOVE_TREE_FUNCTION}${body}`);
  });

  it("a script that calls none of the file's helpers neither defines them nor dot-sources the file", () => {
    assert.equal(withHelpersFile(`${HNS_FUNCTIONS}Write-Output 1\n`), 'Write-Output 1\n');
    assert.equal(withHelpersFile('Write-Output 1\n'), 'Write-Output 1\n');
  });

  it('a helper used only through another helper still goes to the file', () => {
    const out = withHelpersFile(`${HNS_FUNCTIONS}$n = Get-KubemixHnsNetwork -Name 'x'\n`);
    assert.equal(out, `${DOT_SOURCE_HELPERS}$n = Get-KubemixHnsNetwork -Name 'x'\n`);
  });

  it("refuses a definition of one of the file's names with another text", () => {
    const other = ACL_FUNCTIONS.replace("'S-1-5-18', ", '');
    assert.throws(
      () => withHelpersFile(`${other}Set-KubemixPrivateAcl -Path 'C:\\k'\n`),
      /Set-KubemixPrivateAcl other than/,
    );
  });

  it('the file holds each helper once', () => {
    assert.equal(new Set(HELPER_NAMES.map((n) => n.toLowerCase())).size, HELPER_NAMES.length);
    for (const name of HELPER_NAMES) assert.equal(HELPERS_CONTENT.split(`function ${name}`).length, 2, name);
  });
});
