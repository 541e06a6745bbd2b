// Failures talking to the Kubernetes API. The webhook never fails an
// admission because of one (a pod's pull secrets are a help, not a
// requirement): they are logged with their code and the lookup goes on
// without those credentials. As flags or a kubeconfig they are input errors.
import { ExitCode, KubemixError, type ErrorDetails } from '../errors.js';

export class KubeError extends KubemixError {
  /** HTTP status when the API server answered. */
  readonly status: number | undefined;
  constructor(code: string, message: string, details: ErrorDetails & { status?: number } = {}) {
    super(code, ExitCode.input, message, details);
    this.status = details.status;
  }
}
