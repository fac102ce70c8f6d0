import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClientCredentials, createTenant, createTestContext, json } from '../../helpers/app.js';
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
  const tenant = await createTenant(app);
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

  // The global budget is spent: any other client id, known or not, is refused now.
  const w = await createClientCredentials(app, tenant);
  const refused = assertRefused(await app.inject(form({ client_id: w.clientId, client_secret: w.clientSecret })), MESSAGE, 60);
  assert.ok(refused >= 1);
  assert.equal((await app.inject(form({ client_id: w.clientId, client_secret: w.clientSecret }))).headers['ratelimit-limit'], String(GLOBAL));
  assertRefused(await app.inject(form({ client_id: 'cid_unknown', client_secret: 'x' })), MESSAGE, 60);
  assertRefused(await app.inject(form({})), MESSAGE, 60);

  // Refusals are the same error body as every other failure.
  assert.equal(json(await app.inject(basic(w.clientId, w.clientSecret))).message, MESSAGE);
});

test('the token budget is separate from the API budgets of the company it serves', async () => {
  const { app } = context;
  const tenant = await createTenant(app);
  // The OAuth budgets are spent (previous test, same window), the dashboard still works.
  const response = await app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
  assertNotRefused(response, 'API read of the company');
});
