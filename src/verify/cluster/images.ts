// Probe image overrides (`--probe-image KEY=REF`): the key must name a probe
// image of the matrix (linux, or a Windows LTSC line), the reference must be
// one containerd can parse. The grammar is the one of the distribution
// project's reference package (docker/distribution reference/regexp.go):
//   [domain[:port]/]component(/component)*[:tag][@algorithm:hex]
// where a path component is lower-case alphanumerics joined by ".", "_",
// "__" or dashes, a tag is [\w][\w.-]{0,127}, and the whole name is at most
// 255 characters; a sha256 digest is 64 lower-case hex digits. Pure.
import { InputError } from '../../errors.js';
import { VERIFY_PROBE_IMAGES } from '../../matrix/index.js';

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const DOMAIN_PART = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_PART}(?:\\.${DOMAIN_PART})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(?:(${DOMAIN})/)?(${COMPONENT}(?:/${COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`);

/** What is wrong with an image reference, or undefined when containerd would take it. */
export function imageRefProblem(ref: string): string | undefined {
  const m = REFERENCE.exec(ref);
  if (m === null) return 'not an image reference ([registry[:port]/]name[:tag][@sha256:<64 hex>], name in lower case)';
  const [, domain, path = '', , digest] = m;
  if ((domain === undefined ? path : `${domain}/${path}`).length > 255) return 'the name is longer than 255 characters';
  if (digest !== undefined) {
    const [algorithm, hex = ''] = digest.split(':');
    if (algorithm === 'sha256' && !/^[a-f0-9]{64}$/.test(hex))
      return `a sha256 digest has 64 lower-case hex digits (this one has ${hex.length})`;
    if (algorithm !== 'sha256' && algorithm !== 'sha512') return `digest algorithm ${algorithm ?? ''} is not sha256`;
  }
  return undefined;
}

/** `KEY=REF` values of --probe-image, checked, by key. */
export function parseProbeImageOverrides(values: readonly string[]): Record<string, string> {
  const keys = Object.keys(VERIFY_PROBE_IMAGES);
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf('=');
    const key = at > 0 ? v.slice(0, at) : '';
    const ref = v.slice(at + 1);
    const fail = (what: string): never => {
      throw new InputError('flags.invalid', `--probe-image ${JSON.stringify(v)}: ${what}`, {
        path: 'flags.probe-image',
        hint: `give KEY=IMAGE with KEY one of ${keys.join(', ')}, e.g. linux=registry.example.com/busybox:1.37.0@sha256:<64 hex>`,
      });
    };
    if (!keys.includes(key)) fail(key === '' ? 'no KEY= before the image' : `unknown key ${key}`);
    const problem = imageRefProblem(ref);
    if (problem !== undefined) fail(problem);
    out[key] = ref;
  }
  return out;
}
