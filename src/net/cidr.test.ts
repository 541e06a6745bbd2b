import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressAt, formatCidr, hasHostBits, overlaps, parseCidr, subnetAt, usableHosts } from './cidr.js';

test('parses IPv4 and IPv6 networks and refuses host bits and junk', () => {
  assert.equal(formatCidr(parseCidr('10.0.0.0/24') ?? assert.fail()), '10.0.0.0/24');
  assert.equal(formatCidr(parseCidr('fd00:10:244::/56') ?? assert.fail()), 'fd00:10:244::/56');
  for (const bad of ['10.0.0.1/24', '10.0.0.0/33', '10.0/16', '10.0.0.0', 'x/8', '10.0.0.0/8/8'])
    assert.equal(parseCidr(bad), undefined, bad);
  assert.equal(hasHostBits('10.0.0.1/24'), true);
});

test('overlap, sizes, subnets', () => {
  const a = parseCidr('10.244.0.0/16') ?? assert.fail();
  const b = parseCidr('10.244.128.0/20') ?? assert.fail();
  const c = parseCidr('10.96.0.0/12') ?? assert.fail();
  assert.equal(overlaps(a, b), true);
  assert.equal(overlaps(a, c), false);
  assert.equal(usableHosts(parseCidr('10.0.0.0/24') ?? assert.fail()), 254n);
  assert.equal(formatCidr(subnetAt(a, 24, 3n)), '10.244.3.0/24');
  assert.equal(addressAt(parseCidr('10.0.0.0/24') ?? assert.fail(), 253n), '10.0.0.253');
});
