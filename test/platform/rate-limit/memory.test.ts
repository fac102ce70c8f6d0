import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../../src/app.js';
import { ConfigError, loadConfig } from '../../../src/platform/config.js';
import { familyOf, oauthClientId } from '../../../src/platform/rate-limit/families.js';
import { createMemoryStore } from '../../../src/platform/rate-limit/store.js';
import type { FastifyRequest } from 'fastify';
import { TEST_SECRETS, openTestDatabase } from '../../helpers/app.js';
import { assertNotRefused, assertRefused, createCaller, send } from './support.js';

describe('the memory store', () => {
  test('counts in a fixed window that starts with its first request, then starts again', async () => {
    let now = 1_000_000;
    const store = createMemoryStore(() => now);
    assert.deepEqual(await store.hit('k', 10_000), { count: 1, resetMs: 10_000 });
    now += 4_000;
    assert.deepEqual(await store.hit('k', 10_000), { count: 2, resetMs: 6_000 });
    assert.deepEqual(await store.hit('other', 10_000), { count: 1, resetMs: 10_000 });
    now += 6_000;
    assert.deepEqual(await store.hit('k', 10_000), { count: 1, resetMs: 10_000 }, 'a new window');
  });

  test('ended windows are swept, so the map holds only live buckets', async () => {
    let now = 0;
    const store = createMemoryStore(() => now);
    for (let i = 0; i < 100; i++) await store.hit(`key-${i}`, 1000);
    assert.equal(store.size(), 100);
    now += 6000;
    await store.hit('fresh', 1000);
    assert.equal(store.size(), 1);
  });
});

test('without Redis the service limits in memory, and each instance has its own counters', async () => {
  const database = await openTestDatabase();
  const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_API_READ: '2/60s' };
  const one = await buildApp({ config: loadConfig(env), database, secrets: TEST_SECRETS, redis: undefined });
  const two = await buildApp({ config: loadConfig(env), database, secrets: TEST_SECRETS, redis: undefined });
  try {
    const caller = await createCaller(one);
    assertNotRefused(await send(one, caller, 'apiRead'), 'first');
    assertNotRefused(await send(one, caller, 'apiRead'), 'second');
    assertRefused(await send(one, caller, 'apiRead'), 'API read rate limit exceeded', 60);
    // Memory is per process: without REDIS_URL, N instances allow N times the budget.
    const elsewhere = await send(two, caller, 'apiRead');
    assertNotRefused(elsewhere, 'the other instance');
    assert.equal(elsewhere.headers['ratelimit-remaining'], '1');
  } finally {
    await one.close();
    await two.close();
    await database.close();
  }
});

describe('configuration', () => {
  test('defaults: on, rl: keys, generous per-minute budgets, small admission queues', () => {
    const { rateLimits } = loadConfig({});
    assert.equal(rateLimits.enabled, true);
    assert.equal(rateLimits.keyPrefix, 'rl:');
    assert.deepEqual(rateLimits.budgets.apiRead, { limit: 1200, windowSeconds: 60 });
    assert.deepEqual(rateLimits.budgets.oauthTokenGlobal, { limit: 1200, windowSeconds: 60 });
    // Every budget is per minute except the two of the public booking page that count slower
    // abuse (issue 12): holds per address and bookings per customer email.
    const { publicHoldIp, publicBookEmail, ...perMinute } = rateLimits.budgets;
    for (const budget of Object.values(perMinute)) assert.equal(budget.windowSeconds, 60);
    assert.deepEqual(publicHoldIp, { limit: 10, windowSeconds: 600 });
    assert.deepEqual(publicBookEmail, { limit: 5, windowSeconds: 3600 });
    assert.deepEqual(rateLimits.admission.appointmentList, { concurrency: 4, companyConcurrency: 2, queue: 16, maxWaitMs: 2000 });
    assert.ok(rateLimits.admission.appointmentCursor.companyConcurrency > rateLimits.admission.appointmentList.companyConcurrency, 'the cursor is more relaxed');
    assert.ok(rateLimits.budgets.appointmentCursor.limit > rateLimits.budgets.appointmentList.limit, 'the cursor is more relaxed');
  });

  test('budgets are requests per window in s, m or h', () => {
    const read = (value: string) => loadConfig({ RATE_LIMIT_API_WRITE: value }).rateLimits.budgets.apiWrite;
    assert.deepEqual(read('600/60s'), { limit: 600, windowSeconds: 60 });
    assert.deepEqual(read('600/60'), { limit: 600, windowSeconds: 60 });
    assert.deepEqual(read('600/1m'), { limit: 600, windowSeconds: 60 });
    assert.deepEqual(read('600/m'), { limit: 600, windowSeconds: 60 });
    assert.deepEqual(read(' 50 / 1h '), { limit: 50, windowSeconds: 3600 });
    for (const bad of ['600', '600/', '0/60s', '-1/60s', '600/0s', '600/2d', 'lots/60s', '600/25h']) {
      assert.throws(() => read(bad), (error: unknown) => error instanceof ConfigError && error.message.includes('RATE_LIMIT_API_WRITE'), bad);
    }
  });

  test('switches and admission limits are read', () => {
    const { rateLimits } = loadConfig({
      RATE_LIMITS_ENABLED: 'false',
      RATE_LIMIT_KEY_PREFIX: 'rl:staging:',
      APPOINTMENT_CURSOR_CONCURRENCY: '3',
      APPOINTMENT_CURSOR_COMPANY_CONCURRENCY: '1',
      APPOINTMENT_CURSOR_QUEUE: '0',
      APPOINTMENT_CURSOR_MAX_WAIT_MS: '100',
    });
    assert.equal(rateLimits.enabled, false);
    assert.equal(rateLimits.keyPrefix, 'rl:staging:');
    assert.deepEqual(rateLimits.admission.appointmentCursor, { concurrency: 3, companyConcurrency: 1, queue: 0, maxWaitMs: 100 });
    assert.throws(() => loadConfig({ APPOINTMENT_LIST_CONCURRENCY: '0' }), ConfigError);
  });
});

describe('families', () => {
  test('by route pattern and method', () => {
    assert.equal(familyOf('GET', '/v3/availability'), 'availability');
    assert.equal(familyOf('GET', '/v3/public/availability'), 'publicRead');
    assert.equal(familyOf('HEAD', '/v3/locations'), 'apiRead');
    assert.equal(familyOf('GET', '/v3/appointment/:id'), 'apiRead');
    assert.equal(familyOf('DELETE', '/v3/webhook/:id'), 'apiWrite');
    assert.equal(familyOf('PUT', '/v3/public/appointment/:id/book'), 'publicWrite');
    assert.equal(familyOf('GET', '/v3/appointments'), 'appointmentList');
    assert.equal(familyOf('GET', '/v3/appointments/cursor'), 'appointmentCursor');
    // Issue 12, item 4: everything that takes a password or a sign-in secret.
    for (const [method, url] of [['POST', '/v3/auth/login'], ['POST', '/v3/auth/signup'], ['POST', '/v3/auth/token'], ['PUT', '/v3/auth/me'], ['POST', '/v3/auth/acceptInvitation']] as const) {
      assert.equal(familyOf(method, url), 'signIn', url);
    }
    assert.equal(familyOf('GET', '/v3/auth/me'), 'apiRead');
    for (const url of ['/healthz', '/readyz', '/docs', '/openapi.json', '/metrics', '/v3/oauth/token', undefined]) {
      assert.equal(familyOf('GET', url), undefined, String(url));
    }
  });

  test('the OAuth client id comes from the body or HTTP Basic, read leniently', () => {
    const request = (body: unknown, authorization?: string) => ({ body, headers: { authorization } }) as unknown as FastifyRequest;
    assert.equal(oauthClientId(request({ client_id: 'cid_1' })), 'cid_1');
    assert.equal(oauthClientId(request({}, `Basic ${Buffer.from('cid%202:secret').toString('base64')}`)), 'cid 2');
    assert.equal(oauthClientId(request(undefined, 'Basic !!!')), undefined);
    assert.equal(oauthClientId(request(undefined, 'Bearer x')), undefined);
    assert.equal(oauthClientId(request({ client_id: 'x'.repeat(5000) }))!.length, 200);
  });
});
