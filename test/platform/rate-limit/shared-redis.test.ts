import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/platform/config.js';
import type { DatabaseHandle } from '../../../src/platform/database/index.js';
import type { App } from '../../../src/platform/http/types.js';
import { HIT_SCRIPT, createMemoryStore, createRedisStore } from '../../../src/platform/rate-limit/store.js';
import { createRedisGuard } from '../../../src/platform/redis.js';
import { TEST_SECRETS, openTestDatabase, openTestRedis } from '../../helpers/app.js';
import { assertNotRefused, assertRefused, createCaller, isolatedPrefix, send } from './support.js';

const REDIS_URL = process.env.TEST_REDIS_URL;
const NO_REDIS = REDIS_URL ? false : 'TEST_REDIS_URL is not set: two instances can share a budget only through a real Redis (CI\'s second pass sets it)';

const LIMIT = 4;

/** Two instances of the service: one database, one Redis, each with its own Redis connection. */
describe('two instances on one Redis share one budget', { skip: NO_REDIS }, () => {
  let database: DatabaseHandle;
  const instances: { app: App; redis: Redis }[] = [];

  before(async () => {
    database = await openTestDatabase();
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_KEY_PREFIX: isolatedPrefix(), RATE_LIMIT_API_READ: `${LIMIT}/60s`, RATE_LIMIT_APPOINTMENT_LIST: `${LIMIT}/60s` };
    for (let i = 0; i < 2; i++) {
      const redis = (await openTestRedis())!;
      const app = await buildApp({ config: loadConfig(env), database, secrets: TEST_SECRETS, redis });
      instances.push({ app, redis });
    }
  });
  after(async () => {
    for (const { app, redis } of instances) {
      await app.close();
      await redis.quit();
    }
    await database?.close();
  });

  test('requests spread over both instances spend one company budget', async () => {
    const [one, two] = instances.map((i) => i.app) as [App, App];
    const caller = await createCaller(one);
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const response = await send(i % 2 === 0 ? one : two, caller, 'apiRead');
      assertNotRefused(response, `request ${i + 1}`);
      remaining.push(String(response.headers['ratelimit-remaining']));
    }
    assert.deepEqual(remaining, ['3', '2', '1', '0'], 'each instance sees the other\'s requests');
    assertRefused(await send(one, caller, 'apiRead'), 'API read rate limit exceeded', 60);
    assertRefused(await send(two, caller, 'apiRead'), 'API read rate limit exceeded', 60);
    // The other families of the company, and other companies, are untouched on both.
    assertNotRefused(await send(two, caller, 'appointmentList'), 'appointment list');
    assertNotRefused(await send(two, await createCaller(two), 'apiRead'), 'another company');
  });

  test('the counters are Redis keys under the prefix, expiring with the window', async () => {
    const [one] = instances;
    const caller = await createCaller(one!.app);
    await send(one!.app, caller, 'apiRead');
    const config = loadConfig({ NODE_ENV: 'test' });
    assert.equal(config.rateLimits.keyPrefix, 'rl:', 'keys are prefixed rl: by default');
    const keys = await one!.redis.keys(`rl:test-*:apiRead:company:${caller.tenant.companyId}`);
    assert.equal(keys.length, 1);
    const ttl = await one!.redis.pttl(keys[0]!);
    assert.ok(ttl > 55_000 && ttl <= 60_000, `PTTL ${ttl}`);
    assert.equal(await one!.redis.get(keys[0]!), '1');
  });
});

describe('the Redis store', () => {
  test('counts atomically across connections, many at once', { skip: NO_REDIS }, async () => {
    const a = (await openTestRedis())!;
    const b = (await openTestRedis())!;
    try {
      const key = `${isolatedPrefix()}burst`;
      const options = { fallback: createMemoryStore() };
      const settings = { timeoutMs: 2000, breakerFailures: 3, breakerCooldownMs: 5000 };
      const stores = [createRedisStore(createRedisGuard(a, settings), options), createRedisStore(createRedisGuard(b, settings), options)];
      const hits = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % 2]!.hit(key, 10_000)));
      assert.deepEqual(hits.map((h) => h.count).sort((x, y) => x - y), Array.from({ length: 50 }, (_, i) => i + 1));
      assert.ok(hits.every((h) => h.resetMs > 0 && h.resetMs <= 10_000));
      // The script also works when Redis has not cached it yet (NOSCRIPT, then EVAL).
      await a.script('FLUSH');
      assert.equal((await stores[0]!.hit(key, 10_000)).count, 51);
      assert.ok(HIT_SCRIPT.includes('PEXPIRE'));
      await a.del(key);
    } finally {
      await a.quit();
      await b.quit();
    }
  });

  test('an unreachable Redis does not refuse requests: they are counted in this instance, and it is said once', async () => {
    // Nothing listens on port 1; no retries, no offline queue.
    const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const told: unknown[] = [];
    const store = createRedisStore(createRedisGuard(redis, { timeoutMs: 100, breakerFailures: 3, breakerCooldownMs: 5000 }), { fallback: createMemoryStore(), onUnavailable: (error) => told.push(error) });
    assert.equal((await store.hit('rl:k', 60_000)).count, 1);
    assert.equal((await store.hit('rl:k', 60_000)).count, 2);
    assert.equal(told.length, 1, 'one warning, not one per request');
    assert.equal(store.degraded, true);
    redis.disconnect();
  });

  test('a Redis that does not answer in time is abandoned for the memory count, and its return is noticed', async () => {
    const redisAnswers: { next?: () => Promise<unknown> } = {};
    const fake = {
      status: 'ready',
      evalsha: () => (redisAnswers.next ? redisAnswers.next() : new Promise(() => {})),
      eval: () => new Promise(() => {}),
    } as unknown as Redis;
    let recovered = 0;
    // A breaker that opens only after many failures, so the second call reaches the fake again.
    const store = createRedisStore(createRedisGuard(fake, { timeoutMs: 20, breakerFailures: 100, breakerCooldownMs: 5000 }), { fallback: createMemoryStore(), onRecovered: () => recovered++ });
    const started = performance.now();
    assert.equal((await store.hit('rl:slow', 60_000)).count, 1);
    assert.ok(performance.now() - started < 1000);
    assert.equal(store.degraded, true);
    redisAnswers.next = async () => [7, 30_000];
    assert.deepEqual(await store.hit('rl:slow', 60_000), { count: 7, resetMs: 30_000 });
    assert.equal(store.degraded, false);
    assert.equal(recovered, 1);
  });
});

test('an instance whose Redis is down still serves, limiting in its own memory', async () => {
  const database = await openTestDatabase();
  const redis = new Redis({ host: '127.0.0.1', port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', AVAILABILITY_CACHE: 'false', RATE_LIMIT_KEY_PREFIX: isolatedPrefix(), RATE_LIMIT_API_READ: '2/60s' };
  const app = await buildApp({ config: loadConfig(env), database, secrets: TEST_SECRETS, redis });
  try {
    const caller = await createCaller(app);
    assertNotRefused(await send(app, caller, 'apiRead'), 'first');
    assertNotRefused(await send(app, caller, 'apiRead'), 'second');
    assertRefused(await send(app, caller, 'apiRead'), 'API read rate limit exceeded', 60);
  } finally {
    await app.close();
    redis.disconnect();
    await database.close();
  }
});
