// Check and apply in one command (HostTransport.converge) for transports whose
// exec runs sh scripts: one round trip per task instead of two, and the
// driver's processes (head, timeout, sh) once instead of twice.
import { randomBytes } from 'node:crypto';
import { FrameReader } from './framing.js';
import { convergeScript } from './scripts.js';
import type { ConvergeResult, ExecRequest, ExecResult } from './types.js';

type Exec = (request: ExecRequest) => Promise<ExecResult>;

/** Runs check, then apply only if the check failed, as two commands: for PowerShell or mixed privileges. */
async function apart(exec: Exec, check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
  const c = await exec(check);
  if (c.code === 0 && !c.timedOut) return { ...c, checkPassed: true };
  if (c.timedOut) return { ...c, checkPassed: false };
  return { ...(await exec(apply)), checkPassed: false };
}

export async function convergeWith(exec: Exec, check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
  const foldable =
    check.shell === 'sh' && apply.shell === 'sh' && check.privilege === apply.privilege && check.stdin === undefined;
  if (!foldable) return apart(exec, check, apply);
  // Unpredictable to the scripts' own output, like the session marker; not a secret.
  const token = `KUBEMIX-CHECK-PASSED-${randomBytes(12).toString('hex')}`;
  let passed = false;
  const stderr = new FrameReader(
    token,
    (chunk) => apply.onStderr?.(chunk),
    () => void (passed = true),
  );
  const result = await exec({
    ...apply,
    script: convergeScript(check.script, apply.script, token),
    // Never less time than the two commands apart had.
    timeoutMs: (check.timeoutMs ?? 3_600_000) + (apply.timeoutMs ?? 3_600_000),
    onStderr: (chunk) => stderr.push(chunk),
  });
  stderr.finish();
  return { ...result, stderr: result.stderr.replace(`\n${token} 0 0\n`, ''), checkPassed: passed && result.code === 0 };
}
