// Check and apply in one command (HostTransport.converge) for transports whose
// exec runs sh scripts: one round trip per task instead of two. Each part keeps
// its own timeout inside the command (scripts.ts convergeScript).
import { randomBytes } from 'node:crypto';
import { FrameReader } from './framing.js';
import { CHECK_PASSED, CHECK_TIMED_OUT, convergeScript } from './scripts.js';
import type { ConvergeResult, ExecRequest, ExecResult } from './types.js';

/** The transports' default command timeout (an hour), as in ShellSession and LocalTransport. */
const DEFAULT_TIMEOUT_MS = 3_600_000;
/** Two parts' kill grace (timeout -k 5 each) and a little more. */
const OUTER_SLACK_MS = 15_000;

type Exec = (request: ExecRequest) => Promise<ExecResult>;

/** Runs check, then apply only if the check failed, as two commands: for PowerShell or mixed privileges. */
async function apart(exec: Exec, check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
  const c = await exec(check);
  if (c.code === 0 && !c.timedOut) return { ...c, checkPassed: true };
  if (c.timedOut) return { ...c, checkPassed: false, timedOutPart: 'check' };
  const a = await exec(apply);
  return { ...a, checkPassed: false, ...(a.timedOut ? { timedOutPart: 'apply' as const } : {}) };
}

export async function convergeWith(exec: Exec, check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
  const foldable =
    check.shell === 'sh' && apply.shell === 'sh' && check.privilege === apply.privilege && check.stdin === undefined;
  if (!foldable) return apart(exec, check, apply);
  // Unpredictable to the scripts' own output, like the session marker; not a secret.
  const token = `KUBEMIX-CHECK-PASSED-${randomBytes(12).toString('hex')}`;
  let said: number | undefined;
  const stderr = new FrameReader(
    token,
    (chunk) => apply.onStderr?.(chunk),
    (end) => void (said = end.id),
  );
  const checkMs = check.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const applyMs = apply.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const result = await exec({
    ...apply,
    script: convergeScript(check.script, apply.script, token, {
      checkSeconds: checkMs / 1000,
      applySeconds: applyMs / 1000,
    }),
    // Each part is bounded inside; this outer bound only backs them up (their kill grace included).
    timeoutMs: checkMs + applyMs + OUTER_SLACK_MS,
    boundsItself: true,
    onStderr: (chunk) => stderr.push(chunk),
  });
  stderr.finish();
  const checkPassed = said === CHECK_PASSED && result.code === 0;
  const timedOutPart = result.timedOut ? (said === CHECK_TIMED_OUT ? 'check' : 'apply') : undefined;
  return {
    ...result,
    stderr: result.stderr.replace(new RegExp(`\n${token} [01] (0|124)\n`), ''),
    checkPassed,
    ...(timedOutPart === undefined ? {} : { timedOutPart }),
  };
}
