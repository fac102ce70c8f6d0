// Schemas compiled on first use (tests build the app this way) answer exactly as eager ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { compiledOnFirstUse, validatorOnFirstUse } from '../../../src/platform/http/lazy-schemas.js';

test('a function compiled on first use is compiled once, on the first call, and answers as the compiled one', () => {
  let compiled = 0;
  const double = compiledOnFirstUse(() => {
    compiled++;
    return (n: number) => n * 2;
  });
  assert.equal(compiled, 0, 'nothing is compiled before the first call');
  assert.equal(double(2), 4);
  assert.equal(double(5), 10);
  assert.equal(compiled, 1);
});

test('a validator compiled on first use carries the errors of each call, as Fastify reads them', () => {
  const ajv = new Ajv({ allErrors: true });
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  const eager = ajv.compile(schema);
  const lazy = validatorOnFirstUse(() => ajv.compile(schema));
  for (const data of [{ n: 1 }, {}, { n: 'x' }, { n: 2 }]) {
    assert.equal(lazy(data), eager(data));
    assert.deepEqual(lazy.errors, eager.errors);
  }
});
