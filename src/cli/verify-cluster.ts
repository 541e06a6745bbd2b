// Layer 2 of `kubemix verify` from the CLI: which kubeconfig (--kubeconfig
// FILE, else the admin kubeconfig `kubemix up` captured into the state
// directory's secret store), the probe images, and the API server not
// answering as a failed check rather than a crash.
import { resolve } from 'node:path';
import { FindingsError, InputError, InterruptedError } from '../errors.js';
import { SecretStore } from '../exec/secrets.js';
import { statePaths } from '../exec/state-dir.js';
import { kubeconfigAccess, kubeconfigTextAccess, type KubeAccess } from '../kube/config.js';
import { KubeError } from '../kube/errors.js';
import { SECRET_NAMES } from '../model/secret-names.js';
import type { ClusterModel } from '../model/resolve.js';
import { clusterExpectations } from '../verify/cluster/expect.js';
import { parseEgress } from '../verify/cluster/egress.js';
import { parseProbeImageOverrides } from '../verify/cluster/images.js';
import { runCluster } from '../verify/cluster/run.js';
import { DEMO_NAMESPACE } from '../verify/cluster/demo.js';
import { runDemo } from '../verify/cluster/demo-run.js';
import type { CheckResult } from '../verify/types.js';
import type { CliIo } from './io.js';
import type { Output } from './output.js';

export interface ClusterLayerFlags {
  readonly kubeconfig?: string;
  readonly probeImage?: readonly string[];
  readonly egress?: readonly string[];
  readonly keep?: boolean;
}

/** --probe-image and --egress checked before anything runs (exit 2 naming the flag). */
export function checkClusterFlags(flags: ClusterLayerFlags): void {
  parseProbeImageOverrides(flags.probeImage ?? []);
  parseEgress(flags.egress ?? []);
}

/** The kubeconfig layer 2 uses: --kubeconfig FILE, else the admin kubeconfig captured by `up` (exit 2 if none). */
export async function accessFor(root: string, flags: ClusterLayerFlags, io: CliIo): Promise<KubeAccess> {
  if (flags.kubeconfig !== undefined) return kubeconfigAccess(resolve(io.cwd, flags.kubeconfig));
  const store = statePaths(root).secrets;
  const admin = (await SecretStore.open(store)).get(SECRET_NAMES.adminKubeconfig);
  if (admin === undefined)
    throw new InputError('kubeconfig.missing', `no admin kubeconfig in ${store}`, {
      path: 'flags.kubeconfig',
      hint: 'it is captured when `kubemix up SPEC` initialises the first controller; or give --kubeconfig FILE',
    });
  return kubeconfigTextAccess(admin, `the admin kubeconfig in ${store}`, root);
}

export async function clusterLayer(
  model: ClusterModel,
  access: KubeAccess,
  flags: ClusterLayerFlags,
  io: CliIo,
  out: Output,
  underlay: readonly CheckResult[],
  select: (id: string) => boolean,
): Promise<CheckResult[]> {
  const expect = clusterExpectations(model, parseProbeImageOverrides(flags.probeImage ?? []));
  try {
    return await runCluster(expect, {
      access,
      signal: io.signal,
      underlay,
      select,
      egress: parseEgress(flags.egress ?? []),
      onProgress: (m) => out.log('info', `verify: ${m}`),
    });
  } catch (error) {
    if (!(error instanceof KubeError)) throw error;
    return [
      {
        id: 'cluster/api/deployer/api-server',
        layer: 'cluster',
        probe: 'api',
        source: 'deployer',
        target: 'api-server',
        status: 'fail',
        detail: error.message,
        command: `Kubernetes API at ${access.server} (${access.origin})`,
        cause:
          error.status === 401 || error.status === 403
            ? 'the kubeconfig credentials are refused: fetch a fresh one with `kubemix kubeconfig SPEC`'
            : 'the API server or its load balancer is down or unreachable: see the underlay tcp-6443 cells',
      },
    ];
  }
}

/** `verify --demo`: the Linux front end calling IIS on Windows, shown answering through a NodePort. */
export async function demo(
  model: ClusterModel,
  root: string,
  flags: ClusterLayerFlags,
  io: CliIo,
  out: Output,
): Promise<void> {
  const access = await accessFor(root, flags, io);
  const r = await runDemo(clusterExpectations(model), {
    access,
    signal: io.signal,
    keep: flags.keep === true,
    onProgress: (m) => out.log('info', `demo: ${m}`),
  });
  if (io.signal.aborted) throw new InterruptedError();
  const where = r.kept ? `kept in namespace ${DEMO_NAMESPACE} (kubectl delete namespace ${DEMO_NAMESPACE})` : 'removed';
  const document = { ok: r.ok, url: r.url, answer: r.answer, kept: r.kept };
  if (!out.json)
    out.text(
      `demo: web (nginx, Linux) → Service iis → IIS (Windows), through the NodePort ${r.url}\n` +
        `${r.ok ? '✓' : '✗'} ${r.ok ? 'answered' : 'no answer from IIS'}: ${r.answer}\n` +
        `demo ${where}\n`,
    );
  if (!r.ok)
    throw new FindingsError('the demo application did not answer through its NodePort', {
      hint: 'run `kubemix verify SPEC` for the matrix that says which path is broken',
      report: document,
    });
  if (out.json) out.document(document);
}
