// The public booking catalog: /v3/public/locations, /v3/public/services and /v3/public/availability
// with x-client-id plus an allowed Origin. Only what a booking page needs: online services, no
// settings, no credentials, no customer.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { LONDON, WEEKDAYS_9_TO_17 } from '../../helpers/world.js';
import type { Tenant, TenantFixture } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const ORIGIN = 'https://book.example.com';
/** Settings and credentials a public answer must never carry. (A service's roundRobin is shown:
 * the page must know whether a hold without a chosen resource needs one named.) */
const SECRET_OR_SETTING = [
  'apiKey', 'apiKeyPrefix', 'apiKeyHash', 'publicClientId', 'allowedDomains', 'companyId', 'bookingLimit', 'maxBookingLimit',
  'maxResourceBookingLimit', 'dailyBookingLimitCount', 'dailyBookingLimitMinutes', 'bookingsPerSlot', 'padding', 'bookInAdvance',
  'bookAheadUnit', 'bookAheadValue', 'bookingInterval', 'showOnline', 'legacyId', 'bookingTimerMinutes', 'field1',
  'allowPaddingOverflow', 'ignoreExternalEvents', 'clientSecret', 'archivedAt',
];

const publicHeaders = (tenant: Tenant) => ({ 'x-client-id': tenant.publicClientId, origin: ORIGIN });

function getPublic(tenant: Tenant, url: string, headers: Record<string, string> = publicHeaders(tenant)) {
  return context.app.inject({ method: 'GET', url, headers });
}

/** 200, with no credential or setting anywhere in the body. */
function assertPublicOk(response: LightMyRequestResponse, tenant: Tenant) {
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
  const keys = new Set<string>();
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        keys.add(key);
        walk(inner);
      }
    }
  };
  const body = json(response);
  walk(body);
  for (const key of SECRET_OR_SETTING) assert.equal(keys.has(key), false, `${key} in ${response.body}`);
  assert.equal(response.body.includes(tenant.apiKey), false);
  return body;
}

function assertError(response: LightMyRequestResponse, status: number) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.ok(Array.isArray(body.errors));
  return body as { message: string; errors: Array<{ path: string; msg: string; location: string }> };
}

/** A Wednesday at least two weeks ahead in London. */
function wednesday(): string {
  const ahead = DateTime.now().setZone(LONDON).startOf('day').plus({ weeks: 2 });
  return ahead.plus({ days: (3 - ahead.weekday + 7) % 7 }).toISODate()!;
}

interface Catalog {
  tenant: TenantFixture;
  main: string;
  branch: string;
  online: string;
  branchOnly: string;
  hidden: string;
  resource: string;
}

/** Two locations; an online service at the main one, another at the branch, a hidden one at both. */
async function catalog(): Promise<Catalog> {
  // Its booking page lives at book.example.com.
  const tenant = await context.world.tenant({ allowedDomains: ['book.example.com'] });
  const main = await tenant.location({ hours: WEEKDAYS_9_TO_17, phone: '+442071234567' });
  const branch = await tenant.location({ name: 'Branch' });
  const online = await tenant.service({ locationIds: [main], bookingLimit: 3, padding: 10, bookingsPerSlot: 1, feeAmount: 25, field1: 'internal note' });
  const branchOnly = await tenant.service({ name: 'Walk-in', duration: 30, locationIds: [branch] });
  const hidden = await tenant.service({ name: 'Staff only', locationIds: [main, branch], showOnline: false });
  const resource = await tenant.resource({ name: 'Ann', locationIds: [main], serviceIds: [online, hidden], bookingLimit: 2 });
  return { tenant, main, branch, online, branchOnly, hidden, resource };
}

describe('GET /v3/public/locations', { concurrency: true }, () => {
  test('lists the live locations with what a booking page shows, and nothing else', async () => {
    const c = await catalog();
    const archived = await c.tenant.location({ name: 'Closed down' });
    const deleted = await context.app.inject({ method: 'DELETE', url: `/v3/location/${archived}`, headers: c.tenant.dashboard });
    assert.equal(deleted.statusCode, 204, deleted.body);

    const body = assertPublicOk(await getPublic(c.tenant, '/v3/public/locations'), c.tenant);
    assert.deepEqual(body.data.map((l: { id: string }) => l.id).sort(), [c.main, c.branch].sort());
    const main = body.data.find((l: { id: string }) => l.id === c.main);
    assert.deepEqual(Object.keys(main).sort(), ['address', 'email', 'id', 'name', 'phone', 'timezoneName', 'weeklyAvailability']);
    assert.equal(main.name, 'Main');
    assert.equal(main.timezoneName, LONDON);
    assert.deepEqual(main.weeklyAvailability, WEEKDAYS_9_TO_17);
  });

  test('shows only the company of the client id', async () => {
    const c = await catalog();
    const other = await catalog();
    const body = assertPublicOk(await getPublic(other.tenant, '/v3/public/locations'), other.tenant);
    assert.equal(body.data.some((l: { id: string }) => l.id === c.main), false);
  });
});

describe('GET /v3/public/services', { concurrency: true }, () => {
  test('lists only services shown online, with their public fields', async () => {
    const c = await catalog();
    const body = assertPublicOk(await getPublic(c.tenant, '/v3/public/services'), c.tenant);
    assert.deepEqual(body.data.map((s: { id: string }) => s.id).sort(), [c.online, c.branchOnly].sort());
    const consult = body.data.find((s: { id: string }) => s.id === c.online);
    assert.deepEqual(Object.keys(consult).sort(), [
      'description', 'duration', 'durationInterval', 'durationMax', 'durationMin', 'durationSelect', 'feeAmount', 'id', 'imageUrl', 'locationIds', 'name', 'roundRobin',
    ]);
    assert.equal(consult.roundRobin, 'NONE');
    assert.equal(consult.duration, 60);
    assert.equal(consult.feeAmount, 25);
    assert.deepEqual(consult.locationIds, [c.main]);
  });

  test('LocationId narrows the list to the services offered there', async () => {
    const c = await catalog();
    const atMain = assertPublicOk(await getPublic(c.tenant, `/v3/public/services?LocationId=${c.main}`), c.tenant);
    assert.deepEqual(atMain.data.map((s: { id: string }) => s.id), [c.online]);
    const atBranch = assertPublicOk(await getPublic(c.tenant, `/v3/public/services?LocationId=${c.branch}`), c.tenant);
    assert.deepEqual(atBranch.data.map((s: { id: string }) => s.id), [c.branchOnly]);
    assertError(await getPublic(c.tenant, '/v3/public/services?LocationId=not-a-uuid'), 400);
  });

  test('a service taken offline or archived disappears', async () => {
    const c = await catalog();
    const offline = await context.app.inject({ method: 'PUT', url: `/v3/service/${c.online}`, headers: c.tenant.dashboard, payload: { showOnline: false } });
    assert.equal(offline.statusCode, 200, offline.body);
    const deleted = await context.app.inject({ method: 'DELETE', url: `/v3/service/${c.branchOnly}`, headers: c.tenant.dashboard });
    assert.equal(deleted.statusCode, 204, deleted.body);
    const body = assertPublicOk(await getPublic(c.tenant, '/v3/public/services'), c.tenant);
    assert.deepEqual(body.data, []);
  });
});

describe('GET /v3/public/services: archived locations', { concurrency: true }, () => {
  test('a service offered at an archived location no longer lists it', async () => {
    const c = await catalog();
    const both = await c.tenant.service({ name: 'Both', duration: 30, locationIds: [c.main, c.branch] });
    const before = assertPublicOk(await getPublic(c.tenant, '/v3/public/services'), c.tenant);
    assert.deepEqual([...before.data.find((s: { id: string }) => s.id === both).locationIds].sort(), [c.main, c.branch].sort());
    const archived = await context.app.inject({ method: 'DELETE', url: `/v3/location/${c.branch}`, headers: c.tenant.dashboard });
    assert.equal(archived.statusCode, 204, archived.body);
    const after = assertPublicOk(await getPublic(c.tenant, '/v3/public/services'), c.tenant);
    assert.deepEqual(after.data.find((s: { id: string }) => s.id === both).locationIds, [c.main]);
  });
});

describe('GET /v3/public/availability', { concurrency: true }, () => {
  const query = (c: Catalog, serviceId: string, date: string, extra = '') => `LocationId=${c.main}&ServiceId=${serviceId}&startDate=${date}${extra}`;

  test('answers like the company search, with x-client-id and an allowed Origin', async () => {
    const c = await catalog();
    const date = wednesday();
    const response = await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date)}`);
    const body = assertPublicOk(response, c.tenant);
    assert.equal(body.timezoneName, LONDON);
    // 09:00-17:00 with 10 minutes of padding after each hour: 09:00 to 15:00 every hour.
    assert.equal(body.availableTimes.length, 7);
    assert.deepEqual(body.availableTimes[0].resourceIds, [c.resource]);
    const company = await context.app.inject({ method: 'GET', url: `/v3/availability?${query(c, c.online, date)}`, headers: c.tenant.dashboard });
    assert.deepEqual(body, json(company));
    // ResourceIds narrows as on the company route. (http on the same host is refused since issue 12.)
    const narrowed = await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date, `&ResourceIds=${c.resource}`)}`);
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    const http = await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date)}`, {
      'x-client-id': c.tenant.publicClientId,
      origin: 'http://book.example.com',
    });
    assert.equal(http.statusCode, 403, http.body);
  });

  test('format=compact lists each resource once and each slot by index', async () => {
    const c = await catalog();
    const date = wednesday();
    const full = assertPublicOk(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date)}`), c.tenant);
    const compact = assertPublicOk(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date, '&format=compact')}`), c.tenant);
    assert.deepEqual(compact.resources, [c.resource]);
    assert.deepEqual(
      compact.availableTimes.map((slot: { resourceIndexes: number[] }) => slot.resourceIndexes.map((i) => compact.resources[i])),
      full.availableTimes.map((slot: { resourceIds: string[] }) => slot.resourceIds),
    );
  });

  test('a service not shown online is refused as if it were unknown', async () => {
    const c = await catalog();
    const date = wednesday();
    const hidden = assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.hidden, date)}`), 400);
    const unknownId = randomUUID();
    const unknown = assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, unknownId, date)}`), 400);
    assert.equal(hidden.message.replace(c.hidden, '<id>'), unknown.message.replace(unknownId, '<id>'));
    assert.deepEqual(
      hidden.errors.map((e) => [e.location, e.path, e.msg.replace(c.hidden, '<id>')]),
      unknown.errors.map((e) => [e.location, e.path, e.msg.replace(unknownId, '<id>')]),
    );
    // The company route still serves it.
    const company = await context.app.inject({ method: 'GET', url: `/v3/availability?${query(c, c.hidden, date)}`, headers: c.tenant.dashboard });
    assert.equal(company.statusCode, 200, company.body);
  });

  test('CustomerId is not accepted: a booking page does not identify the customer', async () => {
    const c = await catalog();
    const date = wednesday();
    const customer = await c.tenant.customer({ firstName: 'Ada' });
    for (const id of [customer, randomUUID()]) {
      const body = assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, date, `&CustomerId=${id}`)}`), 400);
      assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'CustomerId']]);
      // The answer is the same for a real and an unknown customer: nothing about customers leaks.
      assert.equal(body.errors[0]!.msg.includes(id), false);
    }
  });

  test('other companies\' ids, bad dates and past dates are 400', async () => {
    const c = await catalog();
    const other = await catalog();
    const date = wednesday();
    assertError(await getPublic(c.tenant, `/v3/public/availability?LocationId=${other.main}&ServiceId=${c.online}&startDate=${date}`), 400);
    assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, other.online, date)}`), 400);
    assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, '2027-02-30')}`), 400);
    const yesterday = DateTime.now().setZone(LONDON).minus({ days: 1 }).toISODate()!;
    const past = assertError(await getPublic(c.tenant, `/v3/public/availability?${query(c, c.online, yesterday)}`), 400);
    assert.equal((past.errors[0] as { code?: string }).code, 'AVAILABILITY-102');
  });

  test('a missing Origin is 403; a missing or bad client id is 401 Invalid Client ID', async () => {
    const c = await catalog();
    const url = `/v3/public/availability?${query(c, c.online, wednesday())}`;
    assertError(await getPublic(c.tenant, url, { 'x-client-id': c.tenant.publicClientId }), 403);
    assertError(await getPublic(c.tenant, url, { 'x-client-id': c.tenant.publicClientId, origin: 'https://evil.example.com' }), 403);
    assert.equal(assertError(await getPublic(c.tenant, url, { 'x-client-id': 'pub_not-a-real-client', origin: ORIGIN }), 401).message, 'Invalid Client ID');
    assert.equal(assertError(await getPublic(c.tenant, url, { origin: ORIGIN }), 401).message, 'Invalid Client ID');
    // The company API key is no credential here.
    assert.equal(assertError(await getPublic(c.tenant, url, { 'x-api-key': c.tenant.apiKey, origin: ORIGIN }), 401).message, 'Invalid Client ID');
    for (const path of ['/v3/public/locations', '/v3/public/services']) {
      assertError(await getPublic(c.tenant, path, { 'x-client-id': c.tenant.publicClientId }), 403);
      assertError(await getPublic(c.tenant, path, { 'x-client-id': 'pub_not-a-real-client', origin: ORIGIN }), 401);
    }
  });
});
