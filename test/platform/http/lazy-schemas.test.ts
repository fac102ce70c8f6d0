// Schemas compiled on first use (tests build the app this way) answer exactly as eager ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { compiledOnFirstUse, compiledOncePerProcess, schemaContentKey, validatorOnFirstUse } from '../../../src/platform/http/lazy-schemas.js';

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

test('compiled once per process: the same content compiles once per scope, whatever object holds it', () => {
  let compiled = 0;
  const compile = () => {
    compiled++;
    return () => compiled;
  };
  const scope = `test ${Math.random()}`;
  const first = compiledOncePerProcess(scope, { type: 'object', properties: { n: { type: 'integer' } } }, compile);
  const again = compiledOncePerProcess(scope, { type: 'object', properties: { n: { type: 'integer' } } }, compile);
  assert.equal(first, again);
  assert.equal(compiled, 1);
  // Another scope (other compiler settings) or other content is compiled on its own.
  compiledOncePerProcess(`${scope} other`, { type: 'object', properties: { n: { type: 'integer' } } }, compile);
  compiledOncePerProcess(scope, { type: 'object', properties: { n: { type: 'string' } } }, compile);
  assert.equal(compiled, 3);
  // What JSON cannot spell is never shared: each call compiles.
  compiledOncePerProcess(scope, { type: 'string', pattern: /x/ }, compile);
  compiledOncePerProcess(scope, { type: 'string', pattern: /x/ }, compile);
  assert.equal(compiled, 5);
});

test('a schema content key says field order, nesting and values; undefined fields are no fields', () => {
  assert.equal(schemaContentKey({ a: 1, b: [true, null, 'x'] }), JSON.stringify({ a: 1, b: [true, null, 'x'] }));
  assert.equal(schemaContentKey({ a: 1, b: undefined }), schemaContentKey({ a: 1 }));
  assert.notEqual(schemaContentKey({ a: 1, b: 2 }), schemaContentKey({ b: 2, a: 1 }));
  assert.equal(schemaContentKey({ f: () => 1 }), undefined);
  assert.equal(schemaContentKey([undefined]), undefined);
  const shared = { type: 'integer' };
  assert.equal(schemaContentKey({ x: shared, y: shared }), '{"x":{"type":"integer"},"y":{"type":"integer"}}');
});
