// `kubemix verify --demo`: the mixed application of the KubeCon walk-through
// kubemix is modelled on, as manifests. A web front end on Linux (nginx)
// proxies every request to a Service backed by IIS on Windows; the front end
// is published through a NodePort. Pure.
import { WINDOWS } from '../../matrix/index.js';
import type { ClusterExpectations } from './expect.js';
import type { Manifest } from './probes.js';

export const DEMO_NAMESPACE = 'kubemix-demo';
export const DEMO_LABEL = 'kubemix.dev/demo';
/** The Linux front end; the IIS images per Windows LTSC line (mcr.microsoft.com/windows/servercore/iis tags). */
export const DEMO_IMAGES: Readonly<Record<string, string>> = {
  web: 'docker.io/library/nginx:1.29',
  ltsc2022: 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022',
  ltsc2025: 'mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2025',
};
/** What the IIS page says, so the answer through the NodePort proves the whole path. */
export const DEMO_MARK = 'kubemix demo: IIS on Windows';

const podEnv = [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }];

function deployment(name: string, podSpec: Manifest): DemoManifest {
  const labels = { [DEMO_LABEL]: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: DEMO_NAMESPACE, labels },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } },
  };
}

function service(name: string, type: 'ClusterIP' | 'NodePort', port: number): DemoManifest {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: DEMO_NAMESPACE },
    spec: { type, selector: { [DEMO_LABEL]: name }, ports: [{ port: 80, targetPort: port }] },
  };
}

/** The demo's objects in creation order; undefined when the cluster has no Windows or no Linux worker. */
export type DemoManifest = Manifest & { readonly kind: string; readonly metadata: Manifest };

export function demoManifests(e: ClusterExpectations): DemoManifest[] | undefined {
  const win = e.nodes.find((n) => n.os === 'windows');
  if (win === undefined || !e.nodes.some((n) => n.os === 'linux')) return undefined;
  const ltsc = WINDOWS.find((w) => w.build === win.windowsBuild)?.ltsc ?? '';
  const iisPage = `Set-Content -Path C:\\inetpub\\wwwroot\\index.html -Value "${DEMO_MARK} ($env:POD_NAME)"`;
  const nginx = [
    'server {',
    '  listen 8080;',
    '  location / {',
    '    # The Windows-backed Service, by its cluster DNS name.',
    `    proxy_pass http://iis.${DEMO_NAMESPACE}.svc.${e.clusterDomain}/;`,
    '  }',
    '}',
  ].join('\n');
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_NAMESPACE, labels: { [DEMO_LABEL]: 'true' } } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web', namespace: DEMO_NAMESPACE },
      data: { 'default.conf': nginx },
    },
    deployment('iis', {
      nodeSelector: { 'kubernetes.io/os': 'windows', 'node.kubernetes.io/windows-build': win.windowsBuild ?? '' },
      tolerations: [{ key: 'os', operator: 'Equal', value: 'windows', effect: 'NoSchedule' }],
      ...(win.runtimeClass === undefined ? {} : { runtimeClassName: win.runtimeClass }),
      containers: [
        {
          name: 'iis',
          image: DEMO_IMAGES[ltsc] ?? '',
          // The image's own entrypoint (ServiceMonitor watching w3svc) after writing the page.
          command: ['powershell.exe', '-NoProfile', '-Command', `${iisPage}; C:\\ServiceMonitor.exe w3svc`],
          env: podEnv,
          ports: [{ containerPort: 80 }],
          readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 5 },
        },
      ],
    }),
    service('iis', 'ClusterIP', 80),
    deployment('web', {
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      containers: [
        {
          name: 'web',
          image: DEMO_IMAGES['web'],
          ports: [{ containerPort: 8080 }],
          volumeMounts: [{ name: 'conf', mountPath: '/etc/nginx/conf.d' }],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 2 },
        },
      ],
      volumes: [{ name: 'conf', configMap: { name: 'web' } }],
    }),
    service('web', 'NodePort', 8080),
  ];
}
