import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { jsonBytes } from '../../../src/platform/http/types.js';

test('jsonBytes: the parts joined, as UTF-8, whatever characters they hold', () => {
  assert.deepEqual(jsonBytes(['{"data":', '[{"notes":"café ☕ 𝄞"}]', ',"nextCursor":null}']), Buffer.from('{"data":[{"notes":"café ☕ 𝄞"}],"nextCursor":null}', 'utf8'));
  assert.equal(jsonBytes([]).length, 0);
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }), (parts) => {
      assert.deepEqual(jsonBytes(parts), Buffer.from(parts.join(''), 'utf8'));
    }),
  );
});
