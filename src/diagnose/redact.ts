// Redaction of what `diagnose` collects, before anything is written: the
// values the state directory's secret store holds, in every form they take
// (as they are, base64, URL-encoded), then the shapes secrets take in logs
// and configs (util/redact.ts, the one redaction the executor's logs,
// events and journal use too). Pure.
import { knownSecrets, redactSecrets } from '../util/redact.js';

export function redactText(text: string, secretValues: Iterable<[string, string]> = []): string {
  return redactSecrets(text, knownSecrets(secretValues));
}
