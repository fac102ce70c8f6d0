import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClientCredentials, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertNotRefused, assertRefused, isolatedPrefix } from './support.js';

// Per client id 2 a minute; the whole deployment 6 a minute.
const PER_CLIENT = 2;
const GLOBAL = 6;
const MESSAGE = 'OAuth token rate limit exceeded';

let context: TestContext;
before(async () => {
  context = await createTestContext({
    RATE_LIMIT_KEY_PREFIX: isolatedPrefix(),
    RATE_LIMIT_OAUTH_TOKEN: `${PER_CLIENT}/1m`,
    RATE_LIMIT_OAUTH_TOKEN_GLOBAL: `${GLOBAL}/1m`,
  });
});
after(() => context.close());

const form = (fields: Record<string, string>) => ({
  method: 'POST' as const,
  url: '/v3/oauth/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(),
});

const basic = (clientId: string, clientSecret: string) => ({
  method: 'POST' as const,
  url: '/v3/oauth/token',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
  },
  payload: 'grant_type=client_credentials',
});

test('token requests are limited per client id (form body and HTTP Basic alike) and for the deployment as a whole', async () => {
  const { app } = context;
  const tenant = await context.world.tenant();
  const x = await createClientCredentials(app, tenant);
  const y = await createClientCredentials(app, tenant);

  // Client x: one request in the form, one with HTTP Basic, then refused (a right secret or not).
  const first = await app.inject(form({ client_id: x.clientId, client_secret: x.clientSecret }));
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.headers['ratelimit-limit'], String(PER_CLIENT), 'the client budget binds first');
  assert.equal(first.headers['ratelimit-remaining'], String(PER_CLIENT - 1));
  assert.equal((await app.inject(basic(x.clientId, x.clientSecret))).statusCode, 200);
  assertRefused(await app.inject(basic(x.clientId, x.clientSecret)), MESSAGE, 60);
  assertRefused(await app.inject(form({ client_id: x.clientId, client_secret: 'wrong' })), MESSAGE, 60);

  // Client y has its own budget: 2 more. x's refusals did not spend the global budget (a client
  // over its own budget never does), so the deployment has spent 4 of 6.
  for (let i = 0; i < PER_CLIENT; i++) {
    const response = await app.inject(form({ client_id: y.clientId, client_secret: y.clientSecret }));
    assert.equal(response.statusCode, 200, response.body);
  }
  const z = await createClientCredentials(app, tenant);
  for (let i = 0; i < PER_CLIENT; i++) {
    const response = await app.inject(form({ client_id: z.clientId, client_secret: z.clientSecret }));
    assert.equal(response.statusCode, 200, response.body);
  }

  // The global budget is spent: any other known client id is refused now. (Issue 12, item 5:
  // unknown client ids no longer spend or meet the global budget; they have only their address's.)
  const w = await createClientCredentials(app, tenant);
  const refused = assertRefused(await app.inject(form({ client_id: w.clientId, client_secret: w.clientSecret })), MESSAGE, 60);
  assert.ok(refused >= 1);
  assert.equal((await app.inject(form({ client_id: w.clientId, client_secret: w.clientSecret }))).headers['ratelimit-limit'], String(GLOBAL));
  assert.equal((await app.inject(form({ client_id: 'cid_unknown', client_secret: 'x' }))).statusCode, 401);

  // Refusals are the same error body as every other failure.
  assert.equal(json(await app.inject(basic(w.clientId, w.clientSecret))).message, MESSAGE);
});

test('the token budget is separate from the API budgets of the company it serves', async () => {
  const { app } = context;
  const tenant = await context.world.tenant();
  // The OAuth budgets are spent (previous test, same window), the dashboard still works.
  const response = await app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
  assertNotRefused(response, 'API read of the company');
});

// Issue 12, item 5: 1,300 requests with random client ids spent the global budget and a real
// client then got 429 for 37 s. Made-up ids now spend only their address's budget.
test('made-up client ids do not spend the global budget; each address has a budget of its own', async () => {
  const isolated = await createTestContext({
    RATE_LIMIT_KEY_PREFIX: isolatedPrefix(),
    RATE_LIMIT_OAUTH_TOKEN_GLOBAL: '3/1m',
    RATE_LIMIT_OAUTH_TOKEN_IP: '4/1m',
  });
  try {
    const { app } = isolated;
    const tenant = await isolated.world.tenant();
    const real = await createClientCredentials(app, tenant);
    // Many addresses, each sending made-up ids up to its own budget.
    for (let address = 1; address <= 5; address++) {
      for (let i = 0; i < 4; i++) {
        const response = await app.inject({ ...form({ client_id: `cid_made_up_${address}_${i}`, client_secret: 'x' }), remoteAddress: `198.51.100.${address}` });
        assert.equal(response.statusCode, 401, response.body);
      }
      // The fifth from the same address is refused by the address budget.
      assertRefused(await app.inject({ ...form({ client_id: `cid_more_${address}`, client_secret: 'x' }), remoteAddress: `198.51.100.${address}` }), MESSAGE, 60);
    }
    // The real client is served: the global budget was never touched.
    const served = await app.inject({ ...form({ client_id: real.clientId, client_secret: real.clientSecret }), remoteAddress: '192.0.2.1' });
    assert.equal(served.statusCode, 200, served.body);
    assert.equal(served.headers['ratelimit-remaining'], '2', 'one of the three global requests spent');
  } finally {
    await isolated.close();
  }
});
