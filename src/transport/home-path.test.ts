import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandHome } from './home-path.js';

test('identity files written as ~/… are read from the home directory', () => {
  assert.equal(expandHome('~/.ssh/id_ed25519', '/home/me'), '/home/me/.ssh/id_ed25519');
  assert.equal(expandHome('~', '/home/me'), '/home/me');
  assert.equal(expandHome('/etc/key', '/home/me'), '/etc/key');
  assert.equal(expandHome('keys/~x', '/home/me'), 'keys/~x');
});
