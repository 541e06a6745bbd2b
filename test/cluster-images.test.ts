// Which images a cluster runs (images list, the air-gap check, the registry
// push): only what some node will pull. With Calico, calico-node-windows brings
// its own network agent, so a spec's own flannel HostProcess image is not one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { clusterImages } from '../src/model/images.js';
import { resolveModel } from '../src/model/resolve.js';
import { readSpec } from '../src/spec/read.js';
import { REPO } from './helpers/shapes.js';

const FLANNEL_HP = 'registry.example.com/flannel-hostprocess:v0.28.4';
const PROXY_HP = 'registry.example.com/kube-proxy-hostprocess:v1.36.2';

function imagesOf(example: string, plugin?: 'flannel'): string[] {
  let text = readFileSync(join(REPO, 'examples', `${example}.yaml`), 'utf8');
  if (plugin !== undefined) text = text.replace(/plugin: calico/, `plugin: ${plugin}`);
  text = text.replace(
    /^spec:\n/m,
    `spec:\n  windows:\n    hostProcess: { flannelImage: ${FLANNEL_HP}, kubeProxyImage: ${PROXY_HP} }\n`,
  );
  const model = resolveModel(readSpec({ kind: 'file', path: `${example}.yaml`, text }));
  return clusterImages(model).map((i) => i.ref);
}

describe('the images a cluster with its own HostProcess images runs', () => {
  it('Calico: kube-proxy’s HostProcess image, not flannel’s', () => {
    const refs = imagesOf('calico-mixed');
    assert.ok(refs.includes(PROXY_HP));
    assert.ok(!refs.includes(FLANNEL_HP), refs.join('\n'));
  });

  it('flannel: both', () => {
    const refs = imagesOf('calico-mixed', 'flannel');
    assert.ok(refs.includes(PROXY_HP) && refs.includes(FLANNEL_HP), refs.join('\n'));
  });
});
