// The plan of an air-gapped spec (examples/airgap-existing.yaml): no task or
// file a node receives reaches pkgs.k8s.io, dl.k8s.io, GitHub or a public
// container registry. Every URL a node is given points at the services node;
// every image a manifest or containerd names is in the plan's image list,
// and its registry is served on every node (Linux and Windows) by the
// services registry alone, with the cluster CA and a credential that is only
// a secret reference in a 0600 file. The spec rules refuse what cannot work
// air-gapped (pkgs.k8s.io packages, no registry, Calico).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveModel } from '../src/model/resolve.js';
import { assemblePlan } from '../src/plan/assemble.js';
import { readSpec } from '../src/spec/read.js';
import { REPO } from './helpers/shapes.js';

const text = readFileSync(join(REPO, 'examples', 'airgap-existing.yaml'), 'utf8');
const { plan, files } = assemblePlan(resolveModel(readSpec({ kind: 'file', path: 'airgap.yaml', text })));
const services = plan.nodes.find((n) => n.role === 'services');
const registry = `registry.${plan.cluster.name}.${plan.cluster.domain}:5000`;
const PUBLIC =
  /pkgs\.k8s\.io|dl\.k8s\.io|github\.com|githubusercontent|registry\.k8s\.io\/v2|registry-1\.docker\.io|ghcr\.io\/v2|mcr\.microsoft\.com\/v2/;

describe('air-gapped plan', () => {
  const nodeTexts = [
    ...plan.tasks
      .filter((t) => t.host !== 'local')
      .flatMap((t) => [
        [t.id, t.apply.script],
        [t.id, t.check?.script ?? ''],
      ]),
    ...files.map((f) => [`${f.node}:${f.remotePath}`, f.content]),
  ] as [string, string][];

  it('no script or file a node gets reaches pkgs.k8s.io, dl.k8s.io, GitHub or a public registry', () => {
    for (const [where, t] of nodeTexts) assert.doesNotMatch(t, PUBLIC, where);
    assert.equal(
      plan.tasks.some((t) => t.name === 'kubernetes-packages'),
      false,
    );
  });

  it('every URL a node is given is the services node (download cache, registry) or the cluster itself', () => {
    const allowed = new Set([
      services?.ip,
      `registry.${plan.cluster.name}.${plan.cluster.domain}`,
      plan.cluster.apiEndpoint.host,
    ]);
    for (const [where, text] of nodeTexts)
      // systemd units' Documentation= links are read by people, never fetched.
      for (const m of text.replace(/^Documentation=.*$/gm, '').matchAll(/https?:\/\/([A-Za-z0-9.-]+)/g)) {
        const host = m[1] ?? '';
        // hosts.toml namespaces and CNI/kube-proxy config carry no URLs but these; a bare upstream name is only a key.
        assert.ok(allowed.has(host) || host === '127.0.0.1' || host === 'localhost', `${where}: ${m[0]}`);
      }
  });

  it("every image the manifests and containerd name is in the plan's list, served by the services registry on every node", () => {
    const images = new Set((plan.images ?? []).map((i) => i.ref));
    const named = new Set<string>();
    for (const f of files) {
      for (const m of f.content.matchAll(/^\s*(?:- )?image: (\S+)$/gm))
        named.add((m[1] ?? '').replace(/^['"]|['"]$/g, ''));
      for (const m of f.content.matchAll(/sandbox = '([^']+)'/g)) named.add(m[1] ?? '');
    }
    assert.ok(named.size >= 3, [...named].join(' '));
    for (const ref of named) assert.ok(images.has(ref), `${ref} is not in plan.images`);
    const registries = [...new Set((plan.images ?? []).map((i) => i.registry))].sort();
    assert.deepEqual(registries, ['docker.io', 'ghcr.io', 'mcr.microsoft.com', 'registry.k8s.io']);
    for (const node of plan.nodes.filter((n) => n.role !== 'services')) {
      for (const r of registries) {
        const f = files.find(
          (x) =>
            x.node === node.name &&
            (x.remotePath === `/etc/containerd/certs.d/${r}/hosts.toml` ||
              x.remotePath.endsWith(`\\certs.d\\${r}\\hosts.toml`)),
        );
        assert.ok(f, `${node.name}: no hosts.toml for ${r}`);
        assert.match(
          f.content,
          new RegExp(`^server = '?"?https://${registry.replace(/\./g, '\\.')}/v2/${r.replace(/\./g, '\\.')}'?"?$`, 'm'),
        );
        assert.match(f.content, /^override_path = true$/m);
        assert.match(f.content, /^ {2}Authorization = 'Basic \{\{secret:registry-basic-auth\}\}'$/m);
        assert.equal(f.mode, '0600', `${node.name}: ${f.remotePath}`);
      }
    }
  });

  it('the services registry task pushes (up --images) before kubeadm init', () => {
    const t = plan.tasks.find((x) => x.pushesImages !== undefined);
    assert.ok(t);
    assert.equal(t.stage, 'task-download-images');
    assert.equal(t.pushesImages?.registry, registry);
    const init = plan.tasks.find((x) => x.name === 'kubeadm-init');
    assert.ok(init?.after.includes(t.id));
    for (const i of plan.images ?? [])
      assert.ok(t.check?.script.includes(`/v2/${i.registry}/${i.repository}/manifests/`), i.ref);
  });

  it('the spec rules refuse pkgs.k8s.io packages, a cluster without its registry, and Calico, air-gapped', () => {
    const codes = (edit: (t: string) => string): string[] => {
      try {
        readSpec({ kind: 'file', path: 'x.yaml', text: edit(text) });
        return [];
      } catch (error) {
        return ((error as { diagnostics?: { code: string }[] }).diagnostics ?? []).map((d) => d.code);
      }
    };
    assert.deepEqual(
      codes((t) => t.replace('install: binaries', 'install: packages')),
      ['airgap.packages'],
    );
    assert.deepEqual(
      codes((t) => t.replace('dhcp: false', 'dhcp: false\n    registry: false')),
      ['airgap.no-registry'],
    );
    assert.ok(
      codes((t) => t.replace('  network:', '  cni:\n    plugin: calico\n  network:')).includes('airgap.calico'),
    );
  });
});
