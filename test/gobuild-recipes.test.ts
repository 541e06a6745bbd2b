// The image and node-download recipes under gobuild/ (gobuild/README.md),
// checked without building anything: the versions each images-<minor> recipe
// packs are the ones kubemix's matrix pins (a bump in src/matrix without one in
// gobuild/ would hand the VM tier images kubemix does not name), each recipe
// folder's copy of the shared images recipe is the shared one, and the cache
// key of a recipe follows the recipes it builds on (its `deps` file). The
// builds themselves, and what they produce, are checked by the VM tier
// (test/e2e/built-images.e2e.test.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { COMPONENTS, CONTAINERD, DEFAULT_CONTAINERD_LINE, IMAGES, kubernetesRelease } from '../src/matrix/index.js';
import { repoPath } from './helpers/cli.js';

const GOBUILD = repoPath('gobuild');
const read = (...p: string[]): string => readFileSync(join(GOBUILD, ...p), 'utf8');

/** `NAME=value` lines of an images-<minor>/release file. */
function releaseVars(minor: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const m of read(`images-${minor}`, 'release').matchAll(/^([A-Z_]+)=(.*)$/gm))
    vars[m[1] ?? ''] = (m[2] ?? '').replace(/^"(.*)"$/, '$1');
  return vars;
}

/** The version a recipe's wrapper module requires of MODULE (its go.mod). */
function required(recipe: string, module: string): string | undefined {
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^\\s*(?:require\\s+)?${escaped} (v[^\\s]+)`, 'm').exec(read(recipe, 'go.mod'))?.[1];
}

const imageRecipes = readdirSync(GOBUILD).filter((d) => /^images-\d+\.\d+$/.test(d));

function buildSh(args: string[], cache: string, root = GOBUILD): { status: number | null; out: string; err: string } {
  const r = spawnSync('bash', [join(root, 'build.sh'), ...args], {
    env: { ...process.env, KUBEMIX_GO_CACHE: cache },
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

describe('gobuild image recipes', () => {
  it('has one for the default Kubernetes minor at least', () => {
    assert.ok(imageRecipes.includes('images-1.36'), `image recipes: ${imageRecipes.join(', ')}`);
  });

  for (const folder of imageRecipes) {
    const minor = folder.slice('images-'.length);
    describe(folder, () => {
      const v = releaseVars(minor);
      const release = kubernetesRelease(minor);

      it('is the shared images recipe, unchanged', () => {
        assert.equal(
          read(folder, 'recipe.sh'),
          read('images-recipe.sh'),
          `copy gobuild/images-recipe.sh to ${folder}/`,
        );
      });

      it("packs the images kubeadm names for the release (the matrix's kubeadmImages)", () => {
        assert.ok(release, `no Kubernetes ${minor} in the matrix`);
        assert.equal(v['KUBERNETES_RECIPE'], `kubernetes-${minor}`);
        assert.equal(v['KUBERNETES_VERSION'], required(`kubernetes-${minor}`, 'k8s.io/kubernetes'));
        assert.equal(v['ETCD_TAG'], release.kubeadmImages.etcd);
        assert.equal(v['COREDNS_TAG'], release.kubeadmImages.coredns);
        assert.equal(required(v['COREDNS_RECIPE'] ?? '', 'github.com/coredns/coredns'), v['COREDNS_TAG']);
        // kubeadm's pause, and the sandbox image kubemix's containerd config names.
        const pause = (v['PAUSE_TAGS'] ?? '').split(' ').sort();
        assert.deepEqual(pause, [...new Set([release.kubeadmImages.pause, IMAGES.pause.tag])].sort());
      });

      it('packs the Linux manifests’ images and node downloads at the pinned versions', () => {
        assert.equal(v['FLANNEL_TAG'], IMAGES.flannel.tag);
        assert.equal(v['FLANNEL_CNI_TAG'], IMAGES.flannelCniPlugin.tag);
        assert.equal(required('flannel', 'github.com/flannel-io/flannel'), v['FLANNEL_TAG']);
        const containerd = CONTAINERD.find((c) => c.line === DEFAULT_CONTAINERD_LINE)?.patch;
        assert.equal(v['CONTAINERD_VERSION'], containerd);
        assert.equal(required('containerd', 'github.com/containerd/containerd/v2'), `v${containerd}`);
        assert.equal(v['RUNC_VERSION'], COMPONENTS.runc);
        assert.equal(required('runc', 'github.com/opencontainers/runc'), `v${COMPONENTS.runc}`);
        assert.equal(v['CNI_PLUGINS_VERSION'], COMPONENTS.cniPlugins);
        assert.equal(required('cni-plugins', 'github.com/containernetworking/plugins'), `v${COMPONENTS.cniPlugins}`);
        assert.equal(required('cri-tools', 'sigs.k8s.io/cri-tools'), v['CRICTL_VERSION']);
      });

      it('lists in deps every recipe it takes outputs from', () => {
        const deps = read(folder, 'deps')
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l !== '' && !l.startsWith('#'));
        for (const name of [v['KUBERNETES_RECIPE'], v['ETCD_RECIPE'], v['COREDNS_RECIPE']])
          assert.ok(deps.includes(name ?? ''), `${folder}/deps lacks ${name}`);
        const used = [...read('images-recipe.sh').matchAll(/input "?([a-z][a-z0-9.-]+)/g)].map((m) => m[1] ?? '');
        for (const name of used) assert.ok(deps.includes(name), `${folder}/deps lacks ${name}`);
      });

      it('packs the etcd that its etcd recipe builds', (t) => {
        const recipe = v['ETCD_RECIPE'] ?? '';
        if (!existsSync(join(GOBUILD, recipe, 'go.mod'))) {
          t.skip(`gobuild/${recipe} is not on this branch yet`);
          return;
        }
        assert.equal(required(recipe, 'go.etcd.io/etcd/server/v3'), `v${(v['ETCD_TAG'] ?? '').replace(/-\d+$/, '')}`);
      });
    });
  }
});

describe('gobuild cache keys', () => {
  /** A copy of the framework with three toy recipes: c uses b, b uses a. */
  function toyRecipes(): string {
    const root = mkdtempSync(join(tmpdir(), 'kubemix-gobuild-'));
    cpSync(join(GOBUILD, 'build.sh'), join(root, 'build.sh'));
    cpSync(join(GOBUILD, 'lib.sh'), join(root, 'lib.sh'));
    for (const [name, deps] of [
      ['a', ''],
      ['b', 'a\n'],
      ['c', '# comment\nb\n'],
    ] as const) {
      cpSync(join(GOBUILD, 'pause'), join(root, name), { recursive: true });
      if (deps !== '') writeFileSync(join(root, name, 'deps'), deps);
    }
    return root;
  }

  it("changes a recipe's folder when a recipe it builds on changes, even two steps down", () => {
    const root = toyRecipes();
    const cache = join(root, 'cache');
    try {
      const before = buildSh(['--dir', 'a', 'b', 'c'], cache, root);
      assert.equal(before.status, 0, before.err);
      writeFileSync(join(root, 'a', 'VERSION'), '9.9.9\n');
      const after = buildSh(['--dir', 'a', 'b', 'c'], cache, root);
      assert.equal(after.status, 0, after.err);
      const [a0, b0, c0] = before.out.trim().split('\n');
      const [a1, b1, c1] = after.out.trim().split('\n');
      assert.notEqual(a0, a1);
      assert.notEqual(b0, b1);
      assert.notEqual(c0, c1);
      assert.match(c1 ?? '', new RegExp(`^${cache}/c-[0-9a-f]{16}$`));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  // A fresh clone elsewhere must find the builds another clone made (the cache is the machine's):
  // the key hashes file contents, never where the checkout sits.
  it('gives a recipe the same folder from two checkouts at different paths', () => {
    const one = toyRecipes();
    const two = toyRecipes();
    try {
      const cache = join(one, 'cache');
      const a = buildSh(['--dir', 'a', 'b', 'c'], cache, one);
      const b = buildSh(['--dir', 'a', 'b', 'c'], cache, two);
      assert.equal(a.status, 0, a.err);
      assert.equal(b.status, 0, b.err);
      assert.equal(b.out, a.out);
    } finally {
      rmSync(one, { recursive: true, force: true });
      rmSync(two, { recursive: true, force: true });
    }
  });

  it('refuses a deps file naming no recipe, naming it', () => {
    const root = toyRecipes();
    try {
      writeFileSync(join(root, 'c', 'deps'), 'b\nno-such-recipe\n');
      const r = buildSh(['--dir', 'c'], join(root, 'cache'), root);
      assert.equal(r.status, 2);
      assert.match(r.err, /c\/deps names 'no-such-recipe', which is no recipe here/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses a recipe that takes another recipe’s output without listing it in deps', () => {
    const root = toyRecipes();
    try {
      writeFileSync(join(root, 'a', 'recipe.sh'), 'targets() { echo t; }\nbuild_target() { dep_dir b > /dev/null; }\n');
      const r = buildSh(['a'], join(root, 'cache'), root);
      assert.notEqual(r.status, 0);
      assert.match(r.err, /uses 'b' but its deps file does not list it/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
