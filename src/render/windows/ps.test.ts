import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACL_FUNCTIONS, HNS_FUNCTIONS, SERVICE_FUNCTIONS, withoutUnusedHelpers } from './ps.js';

const names = (script: string): string[] => [...script.matchAll(/^function ([\w-]+)/gm)].map((m) => m[1] ?? '');

describe('withoutUnusedHelpers', () => {
  it('keeps only the helpers the statements call, and what those call', () => {
    const out = withoutUnusedHelpers(`${SERVICE_FUNCTIONS}${HNS_FUNCTIONS}$n = Get-KubemixHnsNetwork -Name 'x'\n`);
    assert.deepEqual(names(out), ['Invoke-KubemixHns', 'Get-KubemixHnsNetwork']);
    assert.match(out, /^ {4}Add-Type -TypeDefinition @'$/m, 'Invoke-KubemixHns compiles its type itself');
    assert.ok(out.endsWith("$n = Get-KubemixHnsNetwork -Name 'x'\n"));
  });

  it('removes only whole definitions: the rest of the script is unchanged, in order', () => {
    const body = "Stop-KubemixService -Name 'kubelet'\n# set-kubemixrestart is named here, so it stays\n";
    const out = withoutUnusedHelpers(`${SERVICE_FUNCTIONS}${ACL_FUNCTIONS}${body}`);
    assert.deepEqual(names(out), ['Stop-KubemixService', 'Set-KubemixRestart']);
    assert.ok(out.endsWith(body));
  });

  it('drops a second identical copy of a helper, keeps the first', () => {
    const out = withoutUnusedHelpers(`${ACL_FUNCTIONS}${ACL_FUNCTIONS}Set-KubemixPrivateAcl -Path 'C:\\k'\n`);
    assert.deepEqual(names(out), ['Set-KubemixPrivateAcl']);
    assert.equal(out, `${ACL_FUNCTIONS}Set-KubemixPrivateAcl -Path 'C:\\k'\n`);
  });

  it('finds a function declared without parameters, and ends a definition at its own closing brace', () => {
    const endpoint =
      "function Get-KubemixEndpoint {\n  return Invoke-KubemixHns -Method 'GET' -Path '/endpoints/'\n}\n";
    assert.equal(withoutUnusedHelpers(`${HNS_FUNCTIONS}${endpoint}Write-Output 1\n`), 'Write-Output 1\n');
    const out = withoutUnusedHelpers(`${HNS_FUNCTIONS}${endpoint}Get-KubemixEndpoint\n`);
    assert.equal(
      out,
      `${HNS_FUNCTIONS.replace(/^function Get-KubemixHnsNetwork[^]*/m, '')}${endpoint}Get-KubemixEndpoint\n`,
    );
  });

  it('returns a script whose definitions do not end as it is', () => {
    const broken = 'function Get-Kubemix([string]$x) {\n  return $x\n';
    assert.equal(withoutUnusedHelpers(broken), broken);
  });
});
