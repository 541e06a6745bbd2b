// The download cache on the services node: nginx serving the files the
// deployer verified, by SHA256 name, over HTTPS with a certificate from the
// cluster CA. nginx because it serves large static files with sendfile and
// range requests to many nodes at once, checks its own config (`nginx -t`),
// and is a Debian package; it runs from its own unit and config so Debian's
// default site (port 80, HAProxy's ingress) never starts.
import { SERVICES } from '../../matrix/index.js';
import type { RenderedArtifact } from '../types.js';
import type { ServicesFacts } from './facts.js';

export const FILES_PATHS = {
  config: '/etc/kubemix/files/nginx.conf',
  unit: '/etc/systemd/system/kubemix-files.service',
  tlsDir: '/etc/kubemix/files/tls',
  cache: '/var/lib/kubemix/files/sha256',
  pid: '/run/kubemix-files.pid',
  service: 'kubemix-files',
} as const;

export interface FilesServerInput {
  /** `address:port` to listen on. */
  readonly listen: string;
  /** Holds `sha256/<hex>` files. */
  readonly root: string;
  readonly certificate: string;
  readonly key: string;
  readonly pid: string;
  /** Worker user; omitted when the server does not start as root. */
  readonly user?: string;
}

/** nginx.conf for the cache: only `/sha256/<64 hex>` is served, nothing is listed. */
export function filesServerConfig(i: FilesServerInput): string {
  return `# Rendered by kubemix; re-plan instead of editing.
${i.user === undefined ? '' : `user ${i.user};\n`}worker_processes 2;
pid ${i.pid};
error_log stderr warn;
events { worker_connections 512; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  server_tokens off;
  types { }
  default_type application/octet-stream;
  server {
    listen ${i.listen} ssl;
    ssl_certificate ${i.certificate};
    ssl_certificate_key ${i.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    root ${i.root};
    location ~ "^/sha256/[0-9a-f]{64}$" { try_files $uri =404; }
    location / { return 404; }
  }
}
`;
}

export function renderFilesServer(facts: ServicesFacts): RenderedArtifact[] {
  const p = FILES_PATHS;
  const config = filesServerConfig({
    listen: `${facts.node.ip}:${SERVICES.filesPort}`,
    root: p.cache.slice(0, p.cache.lastIndexOf('/')),
    certificate: `${p.tlsDir}/registry.crt`,
    key: `${p.tlsDir}/registry.key`,
    pid: p.pid,
    user: 'www-data',
  });
  const unit = `# Rendered by kubemix; re-plan instead of editing.
[Unit]
Description=kubemix download cache (nginx, HTTPS, files by SHA256)
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
ExecStartPre=/usr/sbin/nginx -t -q -c ${p.config} -g 'daemon off;'
ExecStart=/usr/sbin/nginx -c ${p.config} -g 'daemon off;'
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
`;
  return [
    { node: facts.node.name, remotePath: p.config, mode: '0644', owner: 'root:root', content: config },
    { node: facts.node.name, remotePath: p.unit, mode: '0644', owner: 'root:root', content: unit },
  ];
}
