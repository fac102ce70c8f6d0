import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSealer } from '../../src/platform/encryption.js';

const OLD = 'old-credential-secret-0123456789abcdef0123456789';
const NEW = 'new-credential-secret-0123456789abcdef0123456789';

test('a sealed credential opens with the same key and never shows the plain text', () => {
  const sealer = createSealer(NEW);
  const sealed = sealer.seal('refresh-token-value');
  assert.ok(!sealed.includes('refresh-token-value'));
  assert.equal(sealer.open(sealed), 'refresh-token-value');
  assert.notEqual(sealer.seal('same'), sealer.seal('same'), 'a fresh IV each time');
});

test('an altered credential or one from an unknown key is refused', () => {
  const sealer = createSealer(NEW);
  const sealed = sealer.seal('secret');
  const parts = sealed.split('.');
  const altered = [...parts.slice(0, 4), Buffer.from('other').toString('base64url')].join('.');
  assert.throws(() => sealer.open(altered));
  assert.throws(() => createSealer(OLD).open(sealed), /unknown key/);
  assert.throws(() => sealer.open('plain text'), /not a sealed credential/);
});

test('rotation: the old key still opens, and its values are reported stale until re-sealed', () => {
  const before = createSealer(OLD).seal('token');
  const rotated = createSealer(NEW, [OLD]);
  assert.equal(rotated.open(before), 'token');
  assert.equal(rotated.isStale(before), true);
  const resealed = rotated.seal(rotated.open(before));
  assert.equal(rotated.isStale(resealed), false);
  assert.throws(() => createSealer(NEW).open(before), /unknown key/, 'once the old secret is dropped');
});
