// task-create-services: the services node (Kubeinit's services pod, as a
// host) gets its packages, then dnsmasq (DHCP), Bind (DNS), HAProxy (API and
// ingress) and the registry, each validated by its own tool before restart.
import { SERVICES } from '../../matrix/index.js';
import type { ClusterModel } from '../../model/resolve.js';
import { NAMED_CONF } from '../../render/services/bind.js';
import { DNSMASQ_CONFIG } from '../../render/services/dnsmasq.js';
import { servicesFacts, type ServicesFacts } from '../../render/services/facts.js';
import { HAPROXY_CONFIG } from '../../render/services/haproxy.js';
import { renderServices } from '../../render/services/index.js';
import { proxyExports } from '../../render/linux/proxy.js';
import { REGISTRY_PATHS } from '../../render/services/registry.js';
import { FILES_PATHS } from '../../render/services/files.js';
import { sh, task, taskId } from '../task.js';
import type { Task } from '../types.js';
import type { RenderedArtifact } from '../../render/types.js';
import { configTask } from './config-files.js';
import { shell, shellCode, shellLines, type ShellText } from '../../util/escape/index.js';
import {
  SECRET,
  htpasswdApply,
  htpasswdCheck,
  registryTlsApply,
  registryTlsCheck,
  registryTlsSecrets,
} from './registry-scripts.js';

const STAGE = 'task-create-services';
/** named (user bind) reads the zones here: an upload made it under the session's umask 077 before. */
const BIND_ZONE_DIR = '/etc/bind/kubemix';

export function servicesContribution(model: ClusterModel): { tasks: Task[]; artifacts: RenderedArtifact[] } {
  const facts = servicesFacts(model);
  if (facts === undefined) return { tasks: [], artifacts: [] };
  const artifacts = renderServices(model);
  const host = facts.node.name;
  const packages = packagesTask(facts, proxyExports(model));
  const id = (name: string): string => taskId(STAGE, host, name);
  const under = (path: string, p: string): boolean => path === p || path.startsWith(`${p}/`);
  const files = (...paths: string[]): RenderedArtifact[] =>
    artifacts.filter((a) => paths.some((p) => under(a.remotePath, p)));
  const t = facts.toggles;
  const tasks: Task[] = [packages];
  // dnsmasq first: Debian's package starts it on port 53, which Bind needs.
  if (t.dhcp) {
    tasks.push(
      configTask({
        stage: STAGE,
        host,
        name: 'dnsmasq',
        description: 'DHCP reservations for every planned MAC, DNS off (port=0)',
        files: files(DNSMASQ_CONFIG),
        validate: shell`dnsmasq --test ${`--conf-file=${DNSMASQ_CONFIG}`}`,
        service: 'dnsmasq',
        after: [packages.id],
      }),
    );
  }
  if (t.dns) {
    const zones = [facts.zone, facts.reverseZone];
    tasks.push(
      configTask({
        stage: STAGE,
        host,
        name: 'bind',
        description: `zones ${facts.zone} and ${facts.reverseZone}, recursion for the cluster`,
        files: files(NAMED_CONF, BIND_ZONE_DIR),
        validate: shell`chmod 0755 ${BIND_ZONE_DIR}\nnamed-checkconf -z ${NAMED_CONF} >/dev/null`,
        service: 'named',
        live: shellLines(
          zones.map((z) => shell`rndc zonestatus ${z} >/dev/null 2>&1`),
          ' && ',
        ),
        after: [packages.id, ...(t.dhcp ? [id('dnsmasq')] : [])],
      }),
    );
  }
  if (t.loadBalancer) {
    const ingress = facts.ingress.map((n) => n.name).join(', ');
    tasks.push(
      configTask({
        stage: STAGE,
        host,
        name: 'haproxy',
        description: `API 6443 → ${facts.controllers.length} controllers, 80/443 → ${ingress}, stats ${SERVICES.haproxyStatsPort}`,
        files: files(HAPROXY_CONFIG),
        validate: shell`haproxy -c -q -f ${HAPROXY_CONFIG}`,
        service: 'haproxy',
        after: [packages.id],
      }),
    );
  }
  if (t.registry) tasks.push(...registryTasks(facts, files(REGISTRY_PATHS.config), packages.id));
  const cache = filesTasks(facts, files(FILES_PATHS.config, FILES_PATHS.unit), packages.id, proxyExports(model));
  tasks.push(...cache);
  // Debian's nginx.service is stopped before HAProxy takes port 80.
  const filesPackage = cache[0]?.id;
  return {
    tasks: tasks.map((x) =>
      x.name === 'haproxy' && filesPackage !== undefined ? { ...x, after: [...x.after, filesPackage].sort() } : x,
    ),
    artifacts,
  };
}

function packagesTask(facts: ServicesFacts, proxy: ShellText): Task {
  const t = facts.toggles;
  // Install only what is switched on: an idle dnsmasq would hold port 53.
  const switchedOn = (p: string): boolean => {
    if (p === 'dnsmasq') return t.dhcp;
    if (p.startsWith('bind9')) return t.dns;
    if (p === 'haproxy') return t.loadBalancer;
    if (p === 'docker-registry' || p === 'apache2-utils') return t.registry;
    return true;
  };
  const wanted = SERVICES.aptPackages.filter(switchedOn);
  const list = wanted.join(' ');
  return task({
    stage: STAGE,
    host: facts.node.name,
    name: 'packages',
    description: `install ${list}`,
    check: sh(
      shell`for p in ${wanted}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || exit 1; done`,
    ),
    apply: sh(
      shell`${proxy}set -eu\nexport DEBIAN_FRONTEND=noninteractive\napt-get update -q\napt-get install -y -q --no-install-recommends ${wanted}`,
    ),
    timeoutSeconds: 900,
  });
}

function registryTasks(facts: ServicesFacts, config: RenderedArtifact[], after: string): Task[] {
  const host = facts.node.name;
  const tls = {
    dir: REGISTRY_PATHS.tlsDir,
    group: 'docker-registry',
    host: facts.registryHost,
    ip: facts.node.ip,
    trustAnchor: '/usr/local/share/ca-certificates/kubemix-cluster-ca.crt',
  };
  const tlsTask = task({
    stage: STAGE,
    host,
    name: 'registry-tls',
    description: `key and certificate for ${facts.registryHost}, issued by the cluster CA on the deployer`,
    after: [after],
    check: sh(registryTlsCheck(tls)),
    apply: sh(registryTlsApply(tls)),
    secrets: [SECRET.caCert, registryTlsSecrets(tls).cert, registryTlsSecrets(tls).key],
    // update-ca-certificates rehashes the whole system store (and runs its hooks): 324 s on an
    // emulated one-CPU services node in the real-cluster tier, past the 300 s default.
    timeoutSeconds: 900,
  });
  const authTask = task({
    stage: STAGE,
    host,
    name: 'registry-htpasswd',
    description: `htpasswd entry for ${SERVICES.registryUser}`,
    after: [after],
    check: sh(htpasswdCheck(REGISTRY_PATHS.htpasswd)),
    apply: sh(htpasswdApply(REGISTRY_PATHS.htpasswd, 'docker-registry')),
    secrets: [SECRET.registryPassword],
  });
  const serve = configTask({
    stage: STAGE,
    host,
    name: 'registry',
    description: `registry on ${facts.registryEndpoint} (TLS, htpasswd)`,
    files: config,
    service: 'docker-registry',
    // systemd calls the registry active as soon as it forks; image pushes and pulls need its
    // listener, which under emulation opens seconds later (the real-cluster tier's run 6 pushed
    // into a refused port).
    live: shell`ss -Hltn ${`sport = :${SERVICES.registryPort}`} | grep -q .`,
    liveWaitSeconds: 120,
    after: [tlsTask.id, authTask.id],
  });
  return [tlsTask, authTask, serve];
}

/** nginx (its own unit), its certificate, and the cache directory the executor fills (Task.serves). */
function filesTasks(facts: ServicesFacts, config: RenderedArtifact[], after: string, proxy: ShellText): Task[] {
  const host = facts.node.name;
  const p = FILES_PATHS;
  const pkg = task({
    stage: STAGE,
    host,
    name: 'files-package',
    description: "nginx and curl for the download cache, Debian's own nginx site off",
    after: [after],
    check: sh(
      shellCode(
        `dpkg-query -W -f='\${Status}' nginx 2>/dev/null | grep -q 'install ok installed' && command -v curl >/dev/null && ! systemctl is-enabled --quiet nginx.service 2>/dev/null`,
      ),
    ),
    // Debian's nginx starts its default site on port 80 at install, which HAProxy's ingress holds:
    // policy-rc.d (exit 101) keeps any service from starting during this install.
    apply: sh(shell`${proxy}set -eu
export DEBIAN_FRONTEND=noninteractive
if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d; chmod 0755 /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT; fi
apt-get install -y -q --no-install-recommends nginx curl
systemctl disable --now nginx.service >/dev/null 2>&1 || true`),
    timeoutSeconds: 900,
  });
  const tls = { dir: p.tlsDir, group: 'root', host: `${host}.${facts.zone}`, ip: facts.node.ip };
  const tlsTask = task({
    stage: STAGE,
    host,
    name: 'files-tls',
    description: `key and certificate for ${facts.node.ip}:${SERVICES.filesPort}, signed by the cluster CA`,
    after: [after],
    check: sh(registryTlsCheck(tls)),
    apply: sh(registryTlsApply(tls)),
    secrets: [SECRET.caCert, registryTlsSecrets(tls).cert, registryTlsSecrets(tls).key],
  });
  const serve = configTask({
    stage: STAGE,
    host,
    name: 'files-server',
    description: `nginx serving ${p.cache} on ${facts.node.ip}:${SERVICES.filesPort} (HTTPS)`,
    files: config,
    validate: shell`install -d -m 0755 ${p.cache}\nsystemctl daemon-reload\nnginx -t -q -c ${p.config}`,
    service: p.service,
    after: [pkg.id, tlsTask.id],
  });
  const check = shell`set -eu
for f in ${p.cache}/*; do
  [ -f "$f" ] || continue
  h=\${f##*/}
  curl -fsS --noproxy '*' --cacert ${`${p.tlsDir}/ca.crt`} -r 0-0 -o /dev/null "https://${facts.node.ip}:${SERVICES.filesPort}/sha256/$h" || { echo "the download cache does not serve $h" >&2; exit 1; }
done
`;
  const cache = task({
    stage: STAGE,
    host,
    name: 'download-cache',
    description: `every node download in ${p.cache}, served by SHA256`,
    after: [serve.id],
    check: sh(check),
    apply: sh(shell`systemctl reload-or-restart ${p.service}\n${check}`),
    serves: { dir: p.cache, downloads: [] },
    timeoutSeconds: 1800,
  });
  return [pkg, tlsTask, serve, cache];
}
