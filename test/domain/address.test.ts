// Unit tests of the ISO 3166 address checks (domain/address.ts): codes ADDRESS-107 (country) and
// ADDRESS-108 (state), the paths and messages they carry, and the normalisation to capitals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressProblems, normalizeAddress } from '../../src/domain/address.js';

test('normalizeAddress: country and state in capitals; other fields and a missing state left as they are', () => {
  assert.deepEqual(normalizeAddress({ country: 'us', state: 'ca', city: 'Los Angeles', addressLine1: '1 Main St' }), {
    country: 'US',
    state: 'CA',
    city: 'Los Angeles',
    addressLine1: '1 Main St',
  });
  const withoutState = normalizeAddress({ country: 'de', city: 'berlin' });
  assert.deepEqual(withoutState, { country: 'DE', city: 'berlin' });
  assert.equal('state' in withoutState, false, 'no state key is added when none was given');
});

test('addressProblems: a known country, with or without a known subdivision, in any case, has no problem', () => {
  assert.deepEqual(addressProblems({ country: 'US', state: 'CA' }), []);
  assert.deepEqual(addressProblems({ country: 'in', state: 'mh' }), []);
  assert.deepEqual(addressProblems({ country: 'GB', state: 'ENG' }), []);
  assert.deepEqual(addressProblems({ country: 'FR' }), []);
});

test('addressProblems: an unknown country is ADDRESS-107 at <prefix>.country, quoting the value as sent', () => {
  assert.deepEqual(addressProblems({ country: 'xx' }), [
    { path: 'address.country', msg: 'address.country "xx" is not an ISO 3166-1 alpha-2 country code', code: 'ADDRESS-107' },
  ]);
  assert.deepEqual(addressProblems({ country: 'USA', state: 'CA' }, 'locations.2.address'), [
    { path: 'locations.2.address.country', msg: 'locations.2.address.country "USA" is not an ISO 3166-1 alpha-2 country code', code: 'ADDRESS-107' },
  ]);
});

test('addressProblems: a state that is not a subdivision of the country is ADDRESS-108, with the hint that fits the country', () => {
  assert.deepEqual(addressProblems({ country: 'US', state: 'US-CA' }), [
    { path: 'address.state', msg: 'address.state "US-CA" is not a subdivision of US: use the ISO 3166-2 subdivision code without "US-"', code: 'ADDRESS-108' },
  ]);
  assert.deepEqual(addressProblems({ country: 'us', state: 'zz' }, 'body'), [
    { path: 'body.state', msg: 'body.state "zz" is not a subdivision of US: use the ISO 3166-2 subdivision code without "US-"', code: 'ADDRESS-108' },
  ]);
  // A country that has no subdivisions at all in ISO 3166-2 (Antarctica).
  assert.deepEqual(addressProblems({ country: 'AQ', state: 'X' }), [
    { path: 'address.state', msg: 'address.state "X" is not a subdivision of AQ: AQ has no ISO 3166-2 subdivisions; leave state out', code: 'ADDRESS-108' },
  ]);
});

test('addressProblems: a subdivision of another country is refused (the pair is checked, not the code alone)', () => {
  assert.equal(addressProblems({ country: 'US', state: 'MH' })[0]?.code, 'ADDRESS-108');
  assert.deepEqual(addressProblems({ country: 'IN', state: 'MH' }), []);
});
