// Legacy catalog codes on rules v3 has (issue 13): each refusal carries the code docs/api.md lists.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY } from '../../helpers/world.js';
import type { TenantFixture } from '../../helpers/world.js';

let context: TestContext;
let tenant: TenantFixture;
before(async () => {
  context = await createTestContext();
  tenant = await context.world.tenant();
});
after(() => context.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  context.app.inject({ method, url, headers: tenant.dashboard, ...(payload === undefined ? {} : { payload: payload as object }) });

function coded(response: LightMyRequestResponse, status: number, code: string, path?: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.code, code, response.body);
  if (path !== undefined) assert.deepEqual(body.errors.map((e: { path: string; code?: string }) => [e.path, e.code]), [[path, code]]);
}

const date = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);

test('LIMIT-100: a limit above the maximum', async () => {
  coded(await call('GET', '/v3/locations?limit=501'), 400, 'LIMIT-100', 'limit');
  coded(await call('GET', '/v3/customers?limit=101'), 400, 'LIMIT-100', 'limit');
});

test('CUSTOMER-101: a duplicate customer email is a 409', async () => {
  const email = `dup-${randomUUID()}@example.com`;
  await tenant.customer({ firstName: 'A', lastName: 'B', email });
  coded(await call('POST', '/v3/customer', { firstName: 'C', lastName: 'D', email: email.toUpperCase() }), 409, 'CUSTOMER-101', 'email');
});

test('COMPANY-101: an unknown client id', async () => {
  coded(await call('DELETE', `/v3/clientId/${randomUUID()}`), 404, 'COMPANY-101');
});

test('SERVICE-104, LOCATION-110, LOCATION-111: service type and location links', async () => {
  const location = await tenant.location({ name: 'L' });
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, availabilityType: 'classes' }), 400, 'SERVICE-104', 'availabilityType');
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, locationIds: [location, location] }), 400, 'LOCATION-110', 'locationIds');
  coded(await call('POST', '/v3/service', { name: 'S', duration: 30, locationIds: [randomUUID()] }), 400, 'LOCATION-111', 'locationIds.0');
});

test('RESOURCE-109, RESOURCE-110: resource service links', async () => {
  const service = await tenant.service({ name: 'S', duration: 30 });
  coded(await call('POST', '/v3/resource', { name: 'R', serviceIds: [service, service] }), 400, 'RESOURCE-109', 'serviceIds');
  coded(await call('POST', '/v3/resource', { name: 'R', serviceIds: [service, randomUUID()] }), 400, 'RESOURCE-110', 'serviceIds.1');
});

test('APPOINTMENTREMINDERS-102 and -103: reminder offsets', async () => {
  coded(await call('POST', '/v3/location', { name: 'L', timezoneName: 'Europe/London', reminderOffsets: [0] }), 400, 'APPOINTMENTREMINDERS-102', 'reminderOffsets.0');
  coded(await call('POST', '/v3/location', { name: 'L', timezoneName: 'Europe/London', reminderOffsets: [60, 60] }), 400, 'APPOINTMENTREMINDERS-103', 'reminderOffsets');
});

test('SERVICE-122, AVAILABILITY-103, AVAILABILITY-104, EMAIL-102 and CONTACT-101 on searches and bookings', async () => {
  const location = await tenant.location({ name: 'L', hours: EVERY_DAY });
  const elsewhere = await tenant.location({ name: 'M', hours: EVERY_DAY });
  const service = await tenant.service({ name: 'S', locationIds: [location] });
  const unoffered = await tenant.service({ name: 'T', locationIds: [elsewhere] });
  const worker = await tenant.resource({ name: 'R', locationIds: [location], serviceIds: [service] });
  const away = await tenant.resource({ name: 'Away', locationIds: [elsewhere], serviceIds: [service] });
  const idle = await tenant.resource({ name: 'Idle', locationIds: [location] });
  const search = (serviceId: string, resourceId?: string) =>
    call('GET', `/v3/availability?LocationId=${location}&ServiceId=${serviceId}&startDate=${date}${resourceId ? `&ResourceIds=${resourceId}` : ''}`);
  coded(await search(unoffered), 400, 'SERVICE-122', 'ServiceId');
  coded(await search(service, away), 400, 'AVAILABILITY-103', 'ResourceIds.0');
  coded(await search(service, idle), 400, 'AVAILABILITY-104', 'ResourceIds.0');

  const book = (body: Record<string, unknown>) =>
    call('POST', `/v3/appointment?LocationId=${location}&ServiceId=${service}`, {
      Unavailability: { startTime: `${date}T10:00:00Z`, endTime: `${date}T11:00:00Z` },
      ResourceIds: [worker],
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      ...body,
    });
  coded(await book({ email: 'not-an-email' }), 400, 'EMAIL-102', 'email');
  coded(await book({ phone: '12345' }), 400, 'CONTACT-101', 'phone');
  coded(await book({ ResourceIds: [idle] }), 400, 'AVAILABILITY-104', 'ResourceIds.0');
  coded(
    await call('POST', `/v3/appointment?LocationId=${location}&ServiceId=${unoffered}`, {
      Unavailability: { startTime: `${date}T10:00:00Z`, endTime: `${date}T11:00:00Z` },
      ResourceIds: [worker],
    }),
    400,
    'SERVICE-122',
    'ServiceId',
  );
});
