// Redis is an optimisation, never a dependency of an answer (issue 11, finding 3): every call has a
// deadline, a breaker skips Redis while it fails, and a cache bump after a commit cannot hold the
// write's answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { createRedisGuard, RedisUnavailableError } from '../../src/platform/redis.js';
import { createRedisAvailabilityCache } from '../../src/modules/availability/cache.js';

const settings = { timeoutMs: 50, breakerFailures: 2, breakerCooldownMs: 1000 };

function fakeRedis(behaviour: { incr?: () => Promise<unknown>; get?: () => Promise<unknown> }) {
  let calls = 0;
  const redis = {
    status: 'ready',
    incr: () => (calls++, behaviour.incr ? behaviour.incr() : Promise.resolve(1)),
    get: () => (calls++, behaviour.get ? behaviour.get() : Promise.resolve(null)),
    mget: (...keys: string[]) => (calls++, Promise.resolve(keys.map(() => null))),
    set: () => (calls++, Promise.resolve('OK')),
  } as unknown as Redis;
  return { redis, calls: () => calls };
}

test('a call that never answers is abandoned at the deadline', async () => {
  const { redis } = fakeRedis({ get: () => new Promise(() => {}) });
  const guard = createRedisGuard(redis, settings);
  await assert.rejects(guard.run('get', (r) => r.get('k')), /did not answer within 50 ms/);
});

test('the breaker opens after repeated failures, skips Redis while open, probes once after the cool-down, and closes on success', async () => {
  let now = 0;
  let failing = true;
  const { redis, calls } = fakeRedis({ get: () => (failing ? Promise.reject(new Error('ECONNRESET')) : Promise.resolve('v')) });
  const told: string[] = [];
  const guard = createRedisGuard(redis, settings, { onOpen: () => told.push('open'), onClose: () => told.push('close'), onFailure: (op) => told.push(`fail ${op}`) }, () => now);
  await assert.rejects(guard.run('get', (r) => r.get('k')));
  assert.equal(guard.open, false);
  await assert.rejects(guard.run('get', (r) => r.get('k')));
  assert.equal(guard.open, true);
  assert.equal(calls(), 2);
  // Open: Redis is not asked at all.
  await assert.rejects(guard.run('get', (r) => r.get('k')), RedisUnavailableError);
  assert.equal(calls(), 2);
  // After the cool-down one call probes; it fails, so the breaker stays open for another cool-down.
  now += 1000;
  await assert.rejects(guard.run('get', (r) => r.get('k')), /ECONNRESET/);
  assert.equal(calls(), 3);
  await assert.rejects(guard.run('get', (r) => r.get('k')), RedisUnavailableError);
  assert.equal(calls(), 3);
  now += 1000;
  failing = false;
  assert.equal(await guard.run('get', (r) => r.get('k')), 'v');
  assert.equal(guard.open, false);
  // Skipped calls count as failures of their operation (the metric says how much Redis was missed).
  assert.deepEqual(told, ['fail get', 'fail get', 'open', 'fail get', 'fail get', 'fail get', 'close']);
});

test('a disconnected client is not asked (no offline queue): the call fails at once', async () => {
  const { redis, calls } = fakeRedis({});
  (redis as unknown as { status: string }).status = 'reconnecting';
  const guard = createRedisGuard(redis, settings);
  await assert.rejects(guard.run('get', (r) => r.get('k')), /Redis is reconnecting/);
  assert.equal(calls(), 0);
});

test('a cache bump whose INCR never answers returns after the deadline, and the failure is reported', async () => {
  const { redis } = fakeRedis({ incr: () => new Promise(() => {}) });
  const errors: string[] = [];
  const cache = createRedisAvailabilityCache(createRedisGuard(redis, settings), (_error, operation) => errors.push(operation));
  // Resolves (does not hang) although Redis never answers: the answer to the write is not held.
  await cache.touch('c', { services: ['s'], resources: ['r'] });
  assert.deepEqual(errors, ['touch']);
});

test('a failed INCR is a failure, not a result hidden inside a pipeline reply', async () => {
  const { redis } = fakeRedis({ incr: () => Promise.reject(new Error('READONLY You can\'t write against a read only replica')) });
  const errors: string[] = [];
  const cache = createRedisAvailabilityCache(createRedisGuard(redis, settings), (error) => errors.push((error as Error).message));
  await cache.touch('c', { locations: ['l'] });
  assert.equal(errors.length, 1);
  assert.match(errors[0]!, /READONLY/);
});

test('half-open: while one call probes Redis, others are still skipped', async () => {
  let now = 0;
  let answer: (value: string) => void = () => {};
  let failing = true;
  const { redis, calls } = fakeRedis({ get: () => (failing ? Promise.reject(new Error('down')) : new Promise<string>((resolve) => (answer = resolve))) });
  const guard = createRedisGuard(redis, { ...settings, timeoutMs: 5000 }, {}, () => now);
  await assert.rejects(guard.run('get', (r) => r.get('k')));
  await assert.rejects(guard.run('get', (r) => r.get('k')));
  assert.equal(guard.open, true);
  now += 1000;
  failing = false;
  const probe = guard.run('get', (r) => r.get('k'));
  await assert.rejects(guard.run('get', (r) => r.get('k')), RedisUnavailableError, 'a second call during the probe is skipped');
  assert.equal(calls(), 3);
  answer('v');
  assert.equal(await probe, 'v');
  assert.equal(guard.open, false);
});
