// A client generated from the served /openapi.json with openapi-typescript, called through
// openapi-fetch, type-checks and drives a whole booking: token, location, service, resource,
// availability, hold, book. Generated fresh on every run, so it cannot drift from the routes.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import openapiTS, { astToString } from 'openapi-typescript';
import { createClientCredentials, createTestContext, json } from './helpers/app.js';
import type { TestContext } from './helpers/app.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Inside the project, so the driver resolves openapi-fetch from its node_modules.
const WORK = join(ROOT, 'node_modules', '.cache', 'slotwise', `generated-client-${randomUUID()}`);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** What an integrator writes against the generated types: every call below is checked by tsc. */
const DRIVER = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function bookFirstAppointment(baseUrl: string, clientId: string, clientSecret: string, date: string) {
  const anonymous = createClient<paths>({ baseUrl });
  const token = await anonymous.POST('/v3/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read write' },
  });
  if (!token.data) throw new Error('token: ' + JSON.stringify(token.error));
  const api = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + token.data.access_token } });

  const hours = [{ start: '09:00', end: '17:00' }];
  const location = await api.POST('/v3/location', {
    body: { name: 'Main Street', timezoneName: 'America/New_York', weeklyAvailability: { mon: hours, tue: hours, wed: hours, thu: hours, fri: hours, sat: hours, sun: hours } },
  });
  if (!location.data) throw new Error('location: ' + JSON.stringify(location.error));
  const service = await api.POST('/v3/service', { body: { name: 'Check-up', duration: 60, locationIds: [location.data.id] } });
  if (!service.data) throw new Error('service: ' + JSON.stringify(service.error));
  const resource = await api.POST('/v3/resource', { body: { name: 'Dr. Ann Lee', locationIds: [location.data.id], serviceIds: [service.data.id] } });
  if (!resource.data) throw new Error('resource: ' + JSON.stringify(resource.error));

  const availability = await api.GET('/v3/availability', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id, startDate: date } },
  });
  if (!availability.data) throw new Error('availability: ' + JSON.stringify(availability.error));
  const first = availability.data.availableTimes[0];
  if (!first) throw new Error('no free time on ' + date);

  const held = await api.POST('/v3/appointment/hold', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id } },
    body: { Unavailability: { startTime: first.startTime, endTime: first.endTime }, ResourceIds: first.resourceIds },
  });
  if (!held.data) throw new Error('hold: ' + JSON.stringify(held.error));
  const booked = await api.PUT('/v3/appointment/{id}/book', {
    params: { path: { id: held.data.id } },
    body: { name: 'Cara Jones', email: 'cara.jones@example.com', phone: '2125550188' },
  });
  if (!booked.data) throw new Error('book: ' + JSON.stringify(booked.error));

  // A refusal comes back typed as the error body.
  const again = await api.POST('/v3/appointment/hold', {
    params: { query: { LocationId: location.data.id, ServiceId: service.data.id } },
    body: { Unavailability: { startTime: first.startTime, endTime: first.endTime }, ResourceIds: first.resourceIds },
  });
  const refusal: string | undefined = again.error?.code;

  return { held: held.data.status, booked: booked.data.status, startTime: booked.data.startTime, first: first.startTime, refusal, customerId: booked.data.customerId };
}
`;

let context: TestContext;
let baseUrl: string;
before(async () => {
  context = await createTestContext();
  baseUrl = await context.app.listen({ host: '127.0.0.1', port: 0 });
  mkdirSync(WORK, { recursive: true });
});
after(async () => {
  rmSync(WORK, { recursive: true, force: true });
  await context.close();
});

test('a client generated from /openapi.json type-checks and books a first appointment', async () => {
  const document = json(await context.app.inject({ method: 'GET', url: '/openapi.json' }));
  writeFileSync(join(WORK, 'schema.ts'), astToString(await openapiTS(document)));
  writeFileSync(join(WORK, 'driver.ts'), DRIVER);
  writeFileSync(join(WORK, 'package.json'), JSON.stringify({ type: 'module' }));

  const compilerOptions = { strict: true, noUncheckedIndexedAccess: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true, noEmit: true, types: ['node'] };
  writeFileSync(join(WORK, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['driver.ts'] }));
  const check = spawnSync(process.execPath, [TSC, '-p', join(WORK, 'tsconfig.json')], { encoding: 'utf8', cwd: WORK });
  assert.equal(check.status, 0, `the generated client does not type-check:\n${check.stdout}${check.stderr}`);

  const tenant = await context.world.tenant();
  const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
  const date = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
  const driver = (await import(pathToFileURL(join(WORK, 'driver.ts')).href)) as {
    bookFirstAppointment: (base: string, id: string, secret: string, date: string) => Promise<Record<string, unknown>>;
  };
  const result = await driver.bookFirstAppointment(baseUrl, clientId, clientSecret, date);
  assert.equal(result.held, 'IN');
  assert.equal(result.booked, 'BK');
  assert.equal(result.startTime, result.first);
  assert.equal(typeof result.customerId, 'string');
  assert.equal(result.refusal, 'BOOKING-105');
});
