import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { FAMILY_MESSAGES, FAMILY_REQUESTS, assertNotRefused, assertRefused, createCaller, isolatedPrefix, send } from './support.js';
import type { LimitedFamily } from './support.js';

// Every family has a budget of 3 requests per minute here; counters live in Redis when
// TEST_REDIS_URL is set, in memory otherwise.
const LIMIT = 3;
const WINDOW = 60;
const budget = `${LIMIT}/${WINDOW}s`;

let context: TestContext;
before(async () => {
  context = await createTestContext({
    RATE_LIMIT_KEY_PREFIX: isolatedPrefix(),
    RATE_LIMIT_AVAILABILITY: budget,
    RATE_LIMIT_API_READ: budget,
    RATE_LIMIT_API_WRITE: budget,
    RATE_LIMIT_PUBLIC_READ: budget,
    RATE_LIMIT_PUBLIC_WRITE: budget,
    RATE_LIMIT_APPOINTMENT_LIST: budget,
    RATE_LIMIT_APPOINTMENT_CURSOR: budget,
  });
});
after(() => context.close());

const families = Object.keys(FAMILY_REQUESTS) as LimitedFamily[];

describe('each family limits on its own, per company', () => {
  for (const family of families) {
    test(`${family}: the ${LIMIT + 1}th request in the window is 429 "${FAMILY_MESSAGES[family]}"; other families and companies are untouched`, async () => {
      const { app } = context;
      const a = await createCaller(app);
      const b = await createCaller(app);

      for (let i = 1; i <= LIMIT; i++) {
        const response = await send(app, a, family);
        assertNotRefused(response, `${family} request ${i}`);
        assert.equal(response.headers['ratelimit-limit'], String(LIMIT));
        assert.equal(response.headers['ratelimit-remaining'], String(LIMIT - i));
        const reset = Number(response.headers['ratelimit-reset']);
        assert.ok(reset >= 1 && reset <= WINDOW, `RateLimit-Reset ${reset}`);
        assert.equal(response.headers['ratelimit-policy'], `${LIMIT};w=${WINDOW}`);
      }
      assertRefused(await send(app, a, family), FAMILY_MESSAGES[family], WINDOW);
      assertRefused(await send(app, a, family), FAMILY_MESSAGES[family], WINDOW);

      // The same company's other families keep their budgets.
      for (const other of families.filter((f) => f !== family)) {
        const response = await send(app, a, other);
        assertNotRefused(response, `${other} after ${family} ran out`);
        assert.equal(response.headers['ratelimit-remaining'], String(LIMIT - 1), `${other} spent only its own budget`);
      }
      // Another company keeps its budget in the same family.
      const fresh = await send(app, b, family);
      assertNotRefused(fresh, `${family} of another company`);
      assert.equal(fresh.headers['ratelimit-remaining'], String(LIMIT - 1));
    });
  }
});

test('a public booking page spends its company\'s public budget; the company\'s API budgets are separate', async () => {
  const { app } = context;
  const caller = await createCaller(app);
  for (let i = 0; i < LIMIT; i++) assertNotRefused(await send(app, caller, 'publicRead'), 'public read');
  const refused = await send(app, caller, 'publicRead');
  assertRefused(refused, 'Public read rate limit exceeded', WINDOW);
  // A booking page's script may read the headers (CORS).
  assert.equal(refused.headers['access-control-allow-origin'], 'https://book.example.com');
  assert.match(String(refused.headers['access-control-expose-headers']), /RateLimit-Remaining.*Retry-After/);
  // The public availability search is a public read too.
  const search = await app.inject({ method: 'GET', url: '/v3/public/availability', headers: caller.public });
  assertRefused(search, 'Public read rate limit exceeded', WINDOW);
  assertNotRefused(await send(app, caller, 'availability'), 'the company\'s own availability search');
});

test('dashboard users have budgets of their own within the company; machine clients share the company\'s', async () => {
  const { app } = context;
  const caller = await createCaller(app);
  const member = await addMember(context, caller.tenant, 'Admin');

  for (let i = 0; i < LIMIT; i++) assertNotRefused(await send(app, caller, 'apiRead', caller.tenant.dashboard), 'owner');
  assertRefused(await send(app, caller, 'apiRead', caller.tenant.dashboard), 'API read rate limit exceeded', WINDOW);

  const other = await send(app, caller, 'apiRead', member.headers);
  assertNotRefused(other, 'another dashboard user of the company');
  assert.equal(other.headers['ratelimit-remaining'], String(LIMIT - 1));
  const machine = await send(app, caller, 'apiRead');
  assertNotRefused(machine, 'a machine client of the company');
  assert.equal(machine.headers['ratelimit-remaining'], String(LIMIT - 1));

  // A second machine client of the same company spends the same company budget.
  const second = await app.inject({ method: 'POST', url: '/v3/clientId', headers: member.headers, payload: {} });
  assert.equal(second.statusCode, 201, second.body);
  const token = await app.inject({
    method: 'POST',
    url: '/v3/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: json(second).clientId, client_secret: json(second).clientSecret }).toString(),
  });
  assert.equal(token.statusCode, 200, token.body);
  const secondMachine = await send(app, caller, 'apiRead', { authorization: `Bearer ${json(token).access_token}` });
  assert.equal(secondMachine.headers['ratelimit-remaining'], String(LIMIT - 2));
});

test('the appointment lists have one company budget: dashboard users and machine clients spend it together', async () => {
  const { app } = context;
  const caller = await createCaller(app);
  const member = await addMember(context, caller.tenant, 'Admin');
  for (const family of ['appointmentList', 'appointmentCursor'] as const) {
    assertNotRefused(await send(app, caller, family, caller.tenant.dashboard), `${family}: owner`);
    assertNotRefused(await send(app, caller, family, member.headers), `${family}: another dashboard user`);
    const machine = await send(app, caller, family);
    assertNotRefused(machine, `${family}: a machine client`);
    assert.equal(machine.headers['ratelimit-remaining'], '0');
    assertRefused(await send(app, caller, family, member.headers), FAMILY_MESSAGES[family], WINDOW);
  }
});

test('Retry-After counts down with the window, in whole seconds', async () => {
  const { app } = context;
  const caller = await createCaller(app);
  for (let i = 0; i < LIMIT; i++) await send(app, caller, 'apiRead');
  const first = assertRefused(await send(app, caller, 'apiRead'), 'API read rate limit exceeded', WINDOW);
  assert.ok(first >= WINDOW - 5, `the window has just started: Retry-After ${first}`);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const later = assertRefused(await send(app, caller, 'apiRead'), 'API read rate limit exceeded', WINDOW);
  assert.ok(later < first, `Retry-After went down: ${first} then ${later}`);
});

test('health, readiness, the OpenAPI document and the docs are never limited and carry no RateLimit headers', async () => {
  const { app } = context;
  for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
    for (let i = 0; i < LIMIT + 2; i++) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
      assert.equal(response.headers['ratelimit-limit'], undefined, url);
    }
  }
});

test('a request that fails authentication spends no budget (it has no caller to charge)', async () => {
  const { app } = context;
  for (let i = 0; i < LIMIT + 2; i++) {
    const response = await app.inject({ method: 'GET', url: '/v3/locations', headers: { authorization: 'Bearer nope' } });
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['ratelimit-limit'], undefined);
  }
});
