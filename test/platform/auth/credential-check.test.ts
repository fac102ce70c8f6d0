// A machine token's credential check riding along with the route's first catalog statement
// (src/platform/auth/credential-check.ts): on the routes that defer it, a revoked or deleted
// credential and a suspended company get the same 401 and 403 as everywhere else, in the same order
// before any 400, nothing is written, and a valid request sends no statement of its own for it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, createClientCredentials, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { dayAhead, hold, setup, slot } from '../../modules/appointments/fixtures.js';
import type { Setup } from '../../modules/appointments/fixtures.js';
import Fastify from 'fastify';
import { assertCredentialChecked, DEFERRED_CREDENTIAL_CHECK, REVOKED_CREDENTIALS_MESSAGE, SUSPENDED_MESSAGE } from '../../../src/platform/auth/credential-check.js';
import { registerAuthentication } from '../../../src/platform/auth/authenticate.js';
import type { PrincipalRepository } from '../../../src/platform/auth/principal-repository.js';
import { createTokenService } from '../../../src/platform/auth/tokens.js';
import { appointmentRepository } from '../../../src/modules/appointments/repository.js';
import { markFromDatabase } from '../../../src/platform/database/errors.js';
import { ApiError, badRequest, DATABASE_UNAVAILABLE, registerErrorHandling } from '../../../src/platform/errors.js';
import { TEST_SECRETS } from '../../helpers/app.js';
import { queriesDuring } from '../../helpers/queries.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const INVALID_TOKEN = 'Invalid or expired token';

interface Caller extends Setup {
  machine: Record<string, string>;
  credentialId: string;
}

/** A bookable tenant and a write machine token of a credential of its own. */
async function caller(): Promise<Caller> {
  const s = await setup(context);
  const { id, clientId, clientSecret } = await createClientCredentials(context.app, s.tenant);
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  const issued = await context.app.inject({ method: 'POST', url: '/v3/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  assert.equal(issued.statusCode, 200, issued.body);
  return { ...s, machine: { authorization: `Bearer ${json(issued).access_token as string}` }, credentialId: id };
}

const revoke = (c: Caller) => context.database.db.updateTable('clientCredentials').set({ revokedAt: new Date() }).where('companyId', '=', c.tenant.companyId).where('id', '=', c.credentialId).execute();
const remove = (c: Caller) => context.database.db.deleteFrom('clientCredentials').where('companyId', '=', c.tenant.companyId).where('id', '=', c.credentialId).execute();
const suspend = (c: Caller) => context.database.db.updateTable('companies').set({ suspendedAt: new Date() }).where('id', '=', c.tenant.companyId).execute();

const appointmentsOf = async (c: Caller) =>
  (await context.database.db.selectFrom('appointments').select(['id', 'status']).where('companyId', '=', c.tenant.companyId).orderBy('id').execute()).map((r) => `${r.id} ${r.status}`);

function assertRefused(response: LightMyRequestResponse, status: 401 | 403, message: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.deepEqual(json(response), { success: false, message, errors: [] });
  assert.match(String(response.headers['content-type']), /^application\/json/);
  // Nor the company's rate-limit budgets: the check of its own came before them.
  for (const name of ['content-encoding', 'idempotent-replayed', 'location', 'ratelimit-remaining', 'ratelimit-limit', 'retry-after']) {
    assert.equal(response.headers[name], undefined, `${name} is dropped`);
  }
}

const search = (c: Caller, query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  context.app.inject({
    method: 'GET',
    url: `/v3/availability?${new URLSearchParams({ LocationId: c.locationId, ServiceId: c.serviceId, startDate: dayAhead(), ...query })}`,
    headers: { ...c.machine, ...headers },
  });
const book = (c: Caller, kind: 'create' | 'hold', body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  context.app.inject({
    method: 'POST',
    url: `/v3/appointment${kind === 'hold' ? '/hold' : ''}?LocationId=${c.locationId}&ServiceId=${c.serviceId}`,
    headers: { ...c.machine, ...headers },
    payload: { ResourceIds: [c.resourceIds[0]], CustomerId: c.customerId, ...body },
  });
const walk = (c: Caller, query: string) => context.app.inject({ method: 'GET', url: `/v3/appointments/cursor?${query}`, headers: c.machine });

/** Every deferred route, called as a valid request would be; `held`: an IN appointment of the caller's. */
function deferredRoutes(c: Caller, held: string, nextCursor: string) {
  return {
    'GET /v3/availability': () => search(c),
    'POST /v3/appointment': () => book(c, 'create', slot(dayAhead(), '12:00')),
    'POST /v3/appointment/hold': () => book(c, 'hold', slot(dayAhead(), '13:00')),
    'PUT /v3/appointment/:id/reserve': () => context.app.inject({ method: 'PUT', url: `/v3/appointment/${held}/reserve`, headers: c.machine, payload: {} }),
    'PUT /v3/appointment/:id/book': () => context.app.inject({ method: 'PUT', url: `/v3/appointment/${held}/book`, headers: c.machine, payload: {} }),
    'GET /v3/appointments': () => context.app.inject({ method: 'GET', url: '/v3/appointments?limit=1', headers: c.machine }),
    'GET /v3/appointments/cursor (first page)': () => walk(c, 'limit=1'),
    'GET /v3/appointments/cursor (next page)': () => walk(c, `cursor=${encodeURIComponent(nextCursor)}`),
  };
}

/** A caller with a hold and a cursor past its first appointment, before its credential goes bad. */
async function prepared() {
  const c = await caller();
  const held = await hold(c, slot(dayAhead(), '10:00'));
  await hold(c, slot(dayAhead(), '11:00'));
  const first = await walk(c, 'limit=1');
  assert.equal(first.statusCode, 200, first.body);
  const nextCursor = json(first).nextCursor as string;
  assert.ok(nextCursor);
  return { c, routes: deferredRoutes(c, held.id, nextCursor) };
}

describe('a deferred credential check refuses as the check of its own did', () => {
  const cases = [
    { name: 'revoked credentials: 401', spoil: revoke, status: 401 as const, message: REVOKED_CREDENTIALS_MESSAGE },
    { name: 'deleted credentials: 401', spoil: remove, status: 401 as const, message: INVALID_TOKEN },
    { name: 'a suspended company: 403', spoil: suspend, status: 403 as const, message: SUSPENDED_MESSAGE },
  ];
  for (const { name, spoil, status, message } of cases) {
    test(`${name} on every deferred route, and nothing is written`, async () => {
      const { c, routes } = await prepared();
      const before_ = await appointmentsOf(c);
      await spoil(c);
      for (const [route, send] of Object.entries(routes)) {
        const response = await send();
        assert.equal(response.statusCode, status, `${route}: ${response.body}`);
        assertRefused(response, status, message);
      }
      assert.deepEqual(await appointmentsOf(c), before_, 'no appointment written or changed');
    });
  }
});

describe('the refusal comes before any other answer, as when the hook checked first', () => {
  test('a body the schema refuses, an unknown service, an unknown parameter: 401, not 400', async () => {
    const c = await caller();
    await revoke(c);
    assertRefused(await book(c, 'create', { Unavailability: 'not a slot' }), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await search(c, { ServiceId: '00000000-0000-4000-8000-000000000000' }), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await search(c, { startDate: 'tomorrow' }), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await walk(c, 'cursor=forged'), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await walk(c, 'limit=1&colour=blue'), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await context.app.inject({ method: 'PUT', url: '/v3/appointment/00000000-0000-4000-8000-000000000000/book', headers: c.machine, payload: {} }), 401, REVOKED_CREDENTIALS_MESSAGE);
  });

  test('a stored Idempotency-Key answer is not replayed to a revoked credential', async () => {
    const c = await caller();
    const headers = { 'idempotency-key': `key-${c.tenant.companyId}` };
    const first = await book(c, 'create', slot(dayAhead(), '14:00'), headers);
    assert.equal(first.statusCode, 201, first.body);
    const replayed = await book(c, 'create', slot(dayAhead(), '14:00'), headers);
    assert.equal(replayed.statusCode, 201, replayed.body);
    assert.equal(replayed.headers['idempotent-replayed'], 'true');
    await revoke(c);
    assertRefused(await book(c, 'create', slot(dayAhead(), '14:00'), headers), 401, REVOKED_CREDENTIALS_MESSAGE);
  });

  test('a cached search is refused too: the check rides with the statement the cache key needs', async () => {
    const c = await caller();
    const fresh = await search(c, {}, { 'accept-encoding': 'gzip' });
    assert.equal(fresh.statusCode, 200, fresh.body);
    const cached = await search(c, {}, { 'accept-encoding': 'gzip' });
    assert.equal(cached.statusCode, 200);
    await suspend(c);
    assertRefused(await search(c, {}, { 'accept-encoding': 'gzip' }), 403, SUSPENDED_MESSAGE);
  });

  test('a read token writing is told its scope before a revoked credential is deferred, as before: 401 first', async () => {
    const c = await caller();
    const { clientId, clientSecret } = await createClientCredentials(context.app, c.tenant);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read' });
    const issued = await context.app.inject({ method: 'POST', url: '/v3/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    const reader = { ...c, machine: { authorization: `Bearer ${json(issued).access_token as string}` } };
    assertRefused(await book(reader, 'create', slot(dayAhead(), '15:00')), 403, 'Insufficient scope: write required');
    await context.database.db.updateTable('clientCredentials').set({ revokedAt: new Date() }).where('companyId', '=', c.tenant.companyId).where('clientId', '=', clientId).execute();
    assertRefused(await book(reader, 'create', slot(dayAhead(), '15:00')), 401, REVOKED_CREDENTIALS_MESSAGE);
  });
});

const OWN_CHECK = /from "companies" as "c" left join "client_credentials" as "cc"/;
const RIDING_CHECK = /left join client_credentials as mcc/;

describe('a valid request sends no statement of its own for the check', () => {
  test('deferred routes carry it in their catalog statement; other routes still read it first', async () => {
    const { c, routes } = await prepared();
    for (const [route, send] of Object.entries(routes)) {
      let response: LightMyRequestResponse | undefined;
      const sent = await queriesDuring(async () => (response = await send()));
      assert.ok(response!.statusCode < 300, `${route}: ${response!.body}`);
      assert.equal(sent.filter((text) => OWN_CHECK.test(text)).length, 0, `${route} sends no check of its own`);
      assert.equal(sent.filter((text) => RIDING_CHECK.test(text)).length, 1, `${route} carries the check once`);
    }
    const sent = await queriesDuring(() => context.app.inject({ method: 'GET', url: `/v3/location/${c.locationId}`, headers: c.machine }));
    assert.equal(sent.filter((text) => OWN_CHECK.test(text)).length, 1, 'a route that does not defer reads the credential first');
  });
});

test('a write with the check still pending is refused as a bug, never made', () => {
  const principal = { kind: 'machine' as const, companyId: 'c', clientId: 'k', scopes: ['write' as const], credentialCheck: { state: 'pending' as const } };
  assert.throws(() => assertCredentialChecked(principal), (error: unknown) => error instanceof ApiError && error.statusCode === 500);
  for (const state of ['checking', 'failed'] as const) {
    assert.throws(() => assertCredentialChecked({ ...principal, credentialCheck: { state } }), (error: unknown) => error instanceof ApiError && error.statusCode === 500);
  }
  assertCredentialChecked({ ...principal, credentialCheck: { state: 'passed' } });
  assertCredentialChecked({ kind: 'machine', companyId: 'c', clientId: 'k', scopes: ['write'] });
});

describe('a refused credential costs its company nothing', () => {
  test('the rate-limit budget it spent is given back, and a refused cursor page reads no rows', async () => {
    const c = await caller();
    const other = await caller();
    // A second credential of the same company, which stays good.
    const { clientId, clientSecret } = await createClientCredentials(context.app, c.tenant);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    const issued = await context.app.inject({ method: 'POST', url: '/v3/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    const good = { ...c, machine: { authorization: `Bearer ${json(issued).access_token as string}` } };
    const remaining = async () => {
      const response = await search(good);
      assert.equal(response.statusCode, 200, response.body);
      return Number(response.headers['ratelimit-remaining']);
    };
    const first = await remaining();
    await revoke(c);
    for (let i = 0; i < 3; i++) assertRefused(await search(c), 401, REVOKED_CREDENTIALS_MESSAGE);
    assertRefused(await search(c, { ServiceId: '00000000-0000-4000-8000-000000000000' }), 401, REVOKED_CREDENTIALS_MESSAGE);
    assert.equal(await remaining(), first - 1, 'only the good credential\'s own request was counted');

    await hold(other, slot(dayAhead(), '10:00'));
    const page = (clientIdOf: string) => appointmentRepository.afterJson(context.database.db, { companyId: other.tenant.companyId, filters: {}, sort: 'startTime', order: 'asc', limit: 10, credentialOf: clientIdOf }, null);
    const otherClientId = (await context.database.db.selectFrom('clientCredentials').select('clientId').where('companyId', '=', other.tenant.companyId).where('id', '=', other.credentialId).executeTakeFirstOrThrow()).clientId;
    const read = await page(otherClientId);
    assert.equal(JSON.parse(read.data).length, 1);
    assert.equal(read.machineContext?.revokedAt, null);
    await revoke(other);
    const refused = await page(otherClientId);
    assert.equal(refused.data, '[]', 'no page is built for a refused credential');
    assert.ok(refused.machineContext?.revokedAt);
    const listed = await appointmentRepository.pageJson(context.database.db, { companyId: other.tenant.companyId, filters: {}, sort: 'startTime', order: 'asc', limit: 10, credentialOf: otherClientId }, 0);
    assert.deepEqual([listed.data, listed.total], ['[]', 0], 'nor a list page or its total');
    assert.ok(listed.machineContext?.revokedAt);
  });
});

test('when the late check cannot reach the database, the answer is the specification\'s 503, not the framework\'s', async () => {
  const tokens = createTokenService(TEST_SECRETS, context.config);
  const down = markFromDatabase(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
  const principals = { machineContext: () => Promise.reject(down) } as unknown as PrincipalRepository;
  const app = Fastify();
  registerErrorHandling(app);
  registerAuthentication(app, { tokens, principals });
  app.get('/v3/deferred', { config: DEFERRED_CREDENTIAL_CHECK }, async () => {
    throw badRequest('refused before any statement');
  });
  try {
    const token = await tokens.signMachineToken({ companyId: '00000000-0000-4000-8000-000000000001', clientId: 'k', scopes: ['read'] });
    const response = await app.inject({ method: 'GET', url: '/v3/deferred', headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.statusCode, 503, response.body);
    const body = json(response);
    assert.equal(body.success, false);
    assert.equal(body.message, DATABASE_UNAVAILABLE);
    assert.deepEqual(body.errors, []);
    assert.equal(typeof body.requestId, 'string');
    assert.ok(response.headers['retry-after']);
  } finally {
    await app.close();
  }
});
