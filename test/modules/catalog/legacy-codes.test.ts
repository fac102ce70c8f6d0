// Legacy catalog codes on rules v3 has (issue 13): each refusal carries the code docs/api.md lists.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTenant, createTestContext, json } from '../../helpers/app.js';
import type { Tenant, TestContext } from '../../helpers/app.js';

let context: TestContext;
let tenant: Tenant;
before(async () => {
  context = await createTestContext();
  tenant = await createTenant(context.app);
});
after(() => context.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: tenant.dashboard, ...(payload === undefined ? {} : { payload: payload as object }) });

async function created(url: string, payload: Record<string, unknown>): Promise<{ id: string }> {
  const response = await call('POST', url, payload);
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

function coded(response: LightMyRequestResponse, status: number, code: string, path?: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.code, code, response.body);
  if (path !== undefined) assert.deepEqual(body.errors.map((e: { path: string; code?: string }) => [e.path, e.code]), [[path, code]]);
}

const EVERY_DAY = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '09:00', end: '17:00' }]]));
const date = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);

test('LIMIT-100: a limit above the maximum', async () => {
  coded(await call('GET', '/v3/locations?limit=501'), 400, 'LIMIT-100', 'limit');
  coded(await call('GET', '/v3/customers?limit=101'), 400, 'LIMIT-100', 'limit');
});

test('CUSTOMER-101: a duplicate customer email is a 409', async () => {
  const email = `dup-${randomUUID()}@example.com`;
  await created('/v3/customer', { firstName: 'A', lastName: 'B', email });
  coded(await call('POST', '/v3/customer', { firstName: 'C', lastName: 'D', email: email.toUpperCase() }), 409, 'CUSTOMER-101', 'email');
});

test('COMPANY-101: an unknown client id', async () => {
  coded(await call('DELETE', `/v3/clientId/${randomUUID()}`), 404, 'COMPANY-101');
});

test('SERVICE-104, LOCATION-110, LOCATION-111: service type and location links', async () => {
  const location = await created('/v3/location', { name: 'L', timezoneName: 'Europe/London' });
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, availabilityType: 'classes' }), 400, 'SERVICE-104', 'availabilityType');
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, locationIds: [location.id, location.id] }), 400, 'LOCATION-110', 'locationIds');
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, locationIds: [randomUUID()] }), 400, 'LOCATION-111', 'locationIds.0');
});

test('RESOURCE-109, RESOURCE-110: resource service links', async () => {
  const service = await created('/v3/service', { name: 'S', duration: 30 });
  coded(await call('POST', '/v3/resource', { name: 'R', serviceIds: [service.id, service.id] }), 400, 'RESOURCE-109', 'serviceIds');
  coded(await call('POST', '/v3/resource', { name: 'R', serviceIds: [service.id, randomUUID()] }), 400, 'RESOURCE-110', 'serviceIds.1');
});

test('APPOINTMENTREMINDERS-102 and -103: reminder offsets', async () => {
  coded(await call('POST', '/v3/location', { name: 'L', timezoneName: 'Europe/London', reminderOffsets: [0] }), 400, 'APPOINTMENTREMINDERS-102', 'reminderOffsets.0');
  coded(await call('POST', '/v3/location', { name: 'L', timezoneName: 'Europe/London', reminderOffsets: [60, 60] }), 400, 'APPOINTMENTREMINDERS-103', 'reminderOffsets');
});

test('SERVICE-122, AVAILABILITY-103, AVAILABILITY-104, EMAIL-102 and CONTACT-101 on searches and bookings', async () => {
  const location = await created('/v3/location', { name: 'L', timezoneName: 'Europe/London', weeklyAvailability: EVERY_DAY });
  const elsewhere = await created('/v3/location', { name: 'M', timezoneName: 'Europe/London', weeklyAvailability: EVERY_DAY });
  const service = await created('/v3/service', { name: 'S', duration: 60, locationIds: [location.id] });
  const unoffered = await created('/v3/service', { name: 'T', duration: 60, locationIds: [elsewhere.id] });
  const worker = await created('/v3/resource', { name: 'R', locationIds: [location.id], serviceIds: [service.id] });
  const away = await created('/v3/resource', { name: 'Away', locationIds: [elsewhere.id], serviceIds: [service.id] });
  const idle = await created('/v3/resource', { name: 'Idle', locationIds: [location.id] });
  const search = (serviceId: string, resourceId?: string) =>
    call('GET', `/v3/availability?LocationId=${location.id}&ServiceId=${serviceId}&startDate=${date}${resourceId ? `&ResourceIds=${resourceId}` : ''}`);
  coded(await search(unoffered.id), 400, 'SERVICE-122', 'ServiceId');
  coded(await search(service.id, away.id), 400, 'AVAILABILITY-103', 'ResourceIds.0');
  coded(await search(service.id, idle.id), 400, 'AVAILABILITY-104', 'ResourceIds.0');

  const book = (body: Record<string, unknown>) =>
    call('POST', `/v3/appointment?LocationId=${location.id}&ServiceId=${service.id}`, {
      Unavailability: { startTime: `${date}T10:00:00Z`, endTime: `${date}T11:00:00Z` },
      ResourceIds: [worker.id],
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      ...body,
    });
  coded(await book({ email: 'not-an-email' }), 400, 'EMAIL-102', 'email');
  coded(await book({ phone: '12345' }), 400, 'CONTACT-101', 'phone');
  coded(await book({ ResourceIds: [idle.id] }), 400, 'AVAILABILITY-104', 'ResourceIds.0');
  coded(
    await call('POST', `/v3/appointment?LocationId=${location.id}&ServiceId=${unoffered.id}`, {
      Unavailability: { startTime: `${date}T10:00:00Z`, endTime: `${date}T11:00:00Z` },
      ResourceIds: [worker.id],
    }),
    400,
    'SERVICE-122',
    'ServiceId',
  );
});
