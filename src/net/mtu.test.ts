import assert from 'node:assert/strict';
import { test } from 'node:test';
import { maxPodMtu, nodeMtu, podMtu } from './mtu.js';

const plain = { nodeNetworkIsVxlan: false, podOverlayIsVxlan: true } as const;

test('node MTU: Ethernet 1500, 1450 under a VXLAN node overlay, or what was set', () => {
  assert.equal(nodeMtu(plain), 1500);
  assert.equal(nodeMtu({ ...plain, nodeNetworkIsVxlan: true }), 1450);
  assert.equal(nodeMtu({ ...plain, nodeNetworkIsVxlan: true, nodeMtu: 9000 }), 9000);
});

test('pod MTU: VXLAN takes 50 bytes, host-gw none; a wish above the limit is capped', () => {
  assert.equal(maxPodMtu(plain), 1450);
  assert.equal(maxPodMtu({ ...plain, nodeNetworkIsVxlan: true }), 1400);
  assert.equal(maxPodMtu({ ...plain, podOverlayIsVxlan: false }), 1500);
  assert.equal(podMtu({ ...plain, podMtu: 1400 }), 1400);
  assert.equal(podMtu({ ...plain, podMtu: 1480 }), 1450);
});
