// Check, then apply only when the check failed (HostTransport.converge). On a
// framed sh session both travel as one command, each script under its own time
// limit (sh-driver.ts); otherwise (PowerShell, mixed privileges, a check with
// stdin, the local transport) as two commands.
import type { SessionResult } from './shell-session.js';
import type { ConvergeResult, ExecRequest, ExecResult } from './types.js';

type Exec = (request: ExecRequest) => Promise<ExecResult>;

/** Whether check and apply can travel as one framed sh command. */
export function foldable(check: ExecRequest, apply: ExecRequest): boolean {
  return (
    check.shell === 'sh' && apply.shell === 'sh' && check.privilege === apply.privilege && check.stdin === undefined
  );
}

/** Runs check, then apply only if the check failed, as two commands. */
export async function convergeApart(exec: Exec, check: ExecRequest, apply: ExecRequest): Promise<ConvergeResult> {
  const c = await exec(check);
  if (c.code === 0 && !c.timedOut) return { ...c, checkPassed: true };
  if (c.timedOut) return { ...c, checkPassed: false, timedOutPart: 'check' };
  const a = await exec(apply);
  const hostMs = c.hostMs !== undefined && a.hostMs !== undefined ? { hostMs: c.hostMs + a.hostMs } : {};
  return { ...a, ...hostMs, checkPassed: false, ...(a.timedOut ? { timedOutPart: 'apply' as const } : {}) };
}

/** What one folded command's result says about its check and apply. */
export function foldedResult(result: SessionResult): ConvergeResult {
  const { part, ...rest } = result;
  const part1 = part === 1;
  return {
    ...rest,
    checkPassed: part1 && result.code === 0 && !result.timedOut,
    ...(result.timedOut ? { timedOutPart: part1 ? ('check' as const) : ('apply' as const) } : {}),
  };
}
