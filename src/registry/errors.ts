// Registry failures. Never fatal to lint or the webhook (an unreachable
// registry is a warning), so they carry a code for logs and tests rather than
// an exit code of their own.
import { ExitCode, KubemixError, type ErrorDetails } from '../errors.js';

export class RegistryError extends KubemixError {
  /** HTTP status when the registry answered. */
  readonly status: number | undefined;
  constructor(code: string, message: string, details: ErrorDetails & { status?: number } = {}) {
    super(code, ExitCode.input, message, details);
    this.status = details.status;
  }
}
