// Redaction as a property (issue #31): every secret shape the review found
// getting through `diagnose`, and every form of a known secret value (as it
// is, base64 alone or inside a longer base64 text at any alignment,
// URL-encoded), never survives the diagnose bundle's redaction, the
// executor's redactor (per-host logs, journal, failure text) or its events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { redactText } from '../src/diagnose/redact.js';
import { EventBus, type ExecEvent } from '../src/exec/events.js';
import { Redactor, SecretStore } from '../src/exec/secrets.js';
import { scratch } from './helpers/shapes.js';

/** [text around the secret, the secret part that must not survive]. */
const SHAPES: readonly [string, string][] = [
  ['proxy http://alice:s3cr3tPass@proxy.example:3128/', 's3cr3tPass'],
  ['HTTPS_PROXY=https://bob:Pa55w0rd@10.0.0.1:3128', 'Pa55w0rd'],
  ['mirror https://tok3nValue@mirror.example/files', 'tok3nValue'],
  ['{"auths":{"r.example":{"auth":"YWxpY2U6czNjcjN0UGFzcw=="}}}', 'YWxpY2U6czNjcjN0UGFzcw=='],
  ['"auth": "ZG9ja2VyOnNlY3JldA=="', 'ZG9ja2VyOnNlY3JldA=='],
  ['Authorization: Basic YWxpY2U6czNjcjN0', 'YWxpY2U6czNjcjN0'],
  ['authorization: basic YWxpY2U6czNjcjN0', 'YWxpY2U6czNjcjN0'],
  ['Authorization: Bearer abc.def', 'abc.def'],
  ['curl -H "Bearer x9y8z7"', 'x9y8z7'],
  ['token ABCDEF.0123456789ABCDEF used', 'ABCDEF.0123456789ABCDEF'],
  ['kubeadm join --token abcdef.0123456789abcdef', 'abcdef.0123456789abcdef'],
  ['jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl here', 'eyJzdWIiOiJ4In0'],
  ['password: hunter22', 'hunter22'],
  ["secret='sh-h-h-h'", 'sh-h-h-h'],
  ['client-key-data: LS0tLS1CRUdJTiBQUklWQVRF', 'LS0tLS1CRUdJTiBQUklWQVRF'],
  [
    '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----',
    'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
  ],
  ['log: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk\nMIGHAgEA (cut here', 'MHcCAQEEIBkg4LVWM9nuwNSk'],
  ['(cut) Nuw8e2fWk1BlrS0cZ3YQpT9x\nAwEHoUQDQgAE\n-----END EC PRIVATE KEY-----\nnext line', 'Nuw8e2fWk1BlrS0cZ3YQpT9x'],
  [
    '{"line":"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx\\n-----END RSA PRIVATE KEY-----"}',
    'MIIEowIBAAKCAQEAx',
  ],
];

/** The forms a known value reaches text in. */
function formsOf(value: string): [string, string][] {
  const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
  return [
    ['as it is', value],
    ['URL-encoded', encodeURIComponent(value)],
    ['base64', b64(value)],
    ['base64url', b64(value).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')],
    ...[1, 2, 3].map((n): [string, string] => [
      `base64 inside a longer text (offset ${n})`,
      b64(Buffer.concat([randomBytes(n), Buffer.from(value), randomBytes(5)])),
    ]),
    ['a kubeconfig line', `client-certificate-data: ${b64(`-----BEGIN CERT-----\n${value}\n`)}`],
    ['docker config auth', `{"auth":"${b64(`user:${value}`)}"}`],
  ];
}

/** The part of a form that is the secret: what must not survive (base64 cores, not their neighbours' characters). */
function mustNotSurvive(value: string, form: string): string[] {
  if (form.includes(value)) return [value];
  if (form.includes(encodeURIComponent(value))) return [encodeURIComponent(value)];
  // For base64: the characters that depend on the value's bytes alone (drop 2 at each end).
  const core = form.replace(/^.*?[:"]\s*"?/, '');
  return core.length > 12 ? [core.slice(4, -4)] : [core];
}

const KNOWN = ['Zx9!pass word/+=', randomBytes(24).toString('hex'), 'p@ss:w0rd%&?', 'ünïcødé-sécret'];

test('every secret shape the review found does not survive diagnose redaction', () => {
  for (const [text, secret] of SHAPES) {
    const out = redactText(`before ${text} after`);
    assert.ok(!out.includes(secret), `${JSON.stringify(text)} → ${JSON.stringify(out)}`);
    assert.match(out, /<redacted/, text);
  }
});

test('every form of a known secret value does not survive diagnose redaction', () => {
  for (const [i, value] of KNOWN.entries()) {
    for (const [how, form] of formsOf(value)) {
      const out = redactText(`line ${form} end`, [[`s${i}`, value]]);
      for (const part of mustNotSurvive(value, form))
        assert.ok(!out.includes(part), `${how} of ${JSON.stringify(value)}: ${JSON.stringify(out)}`);
    }
  }
});

test("the executor's redactor (logs, journal, failures) and its events: shapes and every form of stored values", async () => {
  const tmp = scratch('redaction');
  try {
    const store = await SecretStore.open(join(tmp.dir, 'secrets.json'));
    const redactor = new Redactor(store);
    // Values set after the redactor first ran are still found (it looks again when the store changes).
    redactor.redact('warm up');
    for (const [i, value] of KNOWN.entries()) await store.set(`s${i}`, { value, source: 'generated' });
    const bus = new EventBus();
    bus.useRedactor(redactor);
    const seen: ExecEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    const cases: [string, string[]][] = [
      ...SHAPES.map(([text, secret]): [string, string[]] => [text, [secret]]),
      ...KNOWN.flatMap((value) =>
        formsOf(value).map(([, form]): [string, string[]] => [form, mustNotSurvive(value, form)]),
      ),
    ];
    for (const [text, secrets] of cases) {
      const line = redactor.redact(`x ${text} y`);
      bus.emit({ type: 'task:output', id: 't', host: 'h', stream: 'stdout', line: `x ${text} y` });
      const event = JSON.stringify(seen.at(-1));
      for (const s of secrets) {
        assert.ok(!line.includes(s), `log line: ${JSON.stringify(text)} → ${JSON.stringify(line)}`);
        assert.ok(!event.includes(s), `event: ${JSON.stringify(text)} → ${event}`);
      }
    }
  } finally {
    tmp.remove();
  }
});
