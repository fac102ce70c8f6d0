// Who may do what with appointments: the public booking flow (hold, then book with contact
// details), machine-token scopes, location-scoped and Resource-role dashboard users, tenant
// isolation of every id, and the OpenAPI document listing every appointment route.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY } from '../../helpers/world.js';
import { assertBadRequest, assertNotOpen, create, dayAhead, events, freeTimes, hold, operate, request, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';
import type { BookableOptions } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const ORIGIN = 'https://book.example.com';
const INVALID_CLIENT_ID = 'Invalid Client ID';

/** A new tenant whose public booking page lives at book.example.com, with its bookable catalog. */
async function publicSetup(options: BookableOptions = {}): Promise<Setup> {
  return setup(context, { tenant: await context.world.tenant({ allowedDomains: ['book.example.com'] }), ...options });
}

const publicHeaders = (s: Setup): Record<string, string> => ({ 'x-client-id': s.tenant.publicClientId, origin: ORIGIN });

function publicHold(s: Setup, body: Record<string, unknown>, headers: Record<string, string> = publicHeaders(s)) {
  return context.app.inject({
    method: 'POST',
    url: `/v3/public/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
    headers,
    payload: { ResourceIds: [s.resourceIds[0]], ...body },
  });
}

async function publicHeld(s: Setup, body: Record<string, unknown>): Promise<Appointment> {
  const response = await publicHold(s, body);
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

function publicBook(s: Setup, id: string, payload: Record<string, unknown>, headers: Record<string, string> = publicHeaders(s)) {
  return context.app.inject({ method: 'PUT', url: `/v3/public/appointment/${id}/book`, headers, payload });
}

function get(s: Setup, id: string, headers: Record<string, string> = s.headers) {
  return context.app.inject({ method: 'GET', url: `/v3/appointment/${id}`, headers });
}

async function statusOf(s: Setup, id: string): Promise<Appointment['status']> {
  const response = await get(s, id);
  assert.equal(response.statusCode, 200, response.body);
  return json<Appointment>(response).status;
}

async function customersByEmail(s: Setup, email: string): Promise<Array<{ id: string; firstName: string; lastName: string | null; email: string; phone: string | null }>> {
  const response = await context.app.inject({ method: 'GET', url: `/v3/customers?email=${encodeURIComponent(email)}`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).data;
}

async function customerCount(s: Setup): Promise<number> {
  const response = await context.app.inject({ method: 'GET', url: '/v3/customers?limit=100', headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).total;
}

function assertError(response: LightMyRequestResponse, status: number, message?: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  if (message !== undefined) assert.equal(body.message, message);
  return body;
}

/** Ids of GET /v3/appointments (one page of up to 100), sorted. */
async function listedIds(headers: Record<string, string>, query = ''): Promise<string[]> {
  const response = await context.app.inject({ method: 'GET', url: `/v3/appointments?limit=100${query}`, headers });
  assert.equal(response.statusCode, 200, response.body);
  const body = json<{ data: Appointment[]; total: number }>(response);
  assert.equal(body.total, body.data.length);
  return body.data.map((a) => a.id).sort();
}

/** Ids from a whole walk of GET /v3/appointments/cursor, one appointment per page, sorted. */
async function cursorIds(headers: Record<string, string>, query = ''): Promise<string[]> {
  const ids: string[] = [];
  let url: string | null = `/v3/appointments/cursor?limit=1${query}`;
  for (let pages = 0; url !== null; pages++) {
    assert.ok(pages < 50, 'the cursor walk ends');
    const response: LightMyRequestResponse = await context.app.inject({ method: 'GET', url, headers });
    assert.equal(response.statusCode, 200, response.body);
    const body = json<{ data: Appointment[]; nextCursor: string | null }>(response);
    ids.push(...body.data.map((a) => a.id));
    url = body.nextCursor === null ? null : `/v3/appointments/cursor?cursor=${encodeURIComponent(body.nextCursor)}`;
  }
  return ids.sort();
}

const sorted = (...ids: string[]) => [...ids].sort();

async function expireHold(s: Setup, id: string) {
  await context.database.db
    .updateTable('appointments')
    .set({ expiresAt: new Date(Date.now() - 60_000) })
    .where('companyId', '=', s.tenant.companyId)
    .where('id', '=', id)
    .execute();
}

/** A second location of the tenant, with its own service and resource: a Setup aimed at it. */
async function secondSite(s: Setup): Promise<Setup> {
  const locationId = await s.tenant.location({ name: 'Branch', timezone: s.zone, hours: EVERY_DAY });
  const serviceId = await s.tenant.service({ name: 'Branch consult', locationIds: [locationId] });
  const resourceId = await s.tenant.resource({ name: 'Branch resource', locationIds: [locationId], serviceIds: [serviceId] });
  return { ...s, locationId, serviceId, resourceIds: [resourceId] };
}

async function adjustUsers(s: Setup, users: Array<Record<string, unknown>>) {
  const response = await context.app.inject({ method: 'POST', url: '/v3/users/adjustUsers', headers: s.headers, payload: { users } });
  assert.equal(response.statusCode, 200, response.body);
}

describe('public booking: hold, then book with name, email and phone', () => {
  test('a public hold booked with a new email is BK with a newly created customer', async () => {
    const s = await publicSetup();
    const date = dayAhead();
    const held = await publicHeld(s, slot(date, '10:00'));
    assert.equal(held.status, 'IN');
    assert.equal(held.customerId, null);
    assert.ok(held.expiresAt);
    assert.deepEqual(await events(s, held.id), []);

    const email = `mary-${randomUUID()}@example.com`;
    assert.deepEqual(await customersByEmail(s, email), []);
    const response = await publicBook(s, held.id, { name: 'Mary Shelley', email, phone: '5550123' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
    const booked = json<Appointment>(response);
    assert.equal(booked.id, held.id);
    assert.equal(booked.status, 'BK');
    assert.equal(booked.expiresAt, null);
    assert.ok(booked.customerId);

    const customers = await customersByEmail(s, email);
    assert.equal(customers.length, 1);
    assert.equal(customers[0]!.id, booked.customerId);
    assert.equal(customers[0]!.firstName, 'Mary');
    assert.equal(customers[0]!.lastName, 'Shelley');
    assert.equal(customers[0]!.phone, '5550123');
    assert.equal(await statusOf(s, held.id), 'BK');
    assert.deepEqual(await events(s, held.id), ['NEW_APPOINTMENT']);
    assert.ok(!(await freeTimes(s, date)).includes('10:00'));
  });

  test('a public book with an existing customer\'s email (any letter case) reuses that customer', async () => {
    const s = await publicSetup();
    const existing = await context.app.inject({ method: 'GET', url: `/v3/customer/${s.customerId}`, headers: s.headers });
    assert.equal(existing.statusCode, 200, existing.body);
    const email: string = json(existing).email;
    const before = await customerCount(s);

    const held = await publicHeld(s, slot(dayAhead(), '10:00'));
    const response = await publicBook(s, held.id, { name: 'Ada Lovelace', email: email.toUpperCase() });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json<Appointment>(response).customerId, s.customerId);
    assert.equal(json<Appointment>(response).status, 'BK');
    assert.equal(await customerCount(s), before, 'no customer was created');
    assert.deepEqual((await customersByEmail(s, email)).map((c) => c.id), [s.customerId]);
  });

  test('a public hold of a taken slot is 400 BOOKING-105', async () => {
    const s = await publicSetup();
    const date = dayAhead();
    await create(s, slot(date, '10:00'));
    assertBadRequest(await publicHold(s, slot(date, '10:00')), 'BOOKING-105');
    // Off the hours was never open: refused as such, not as taken.
    assertNotOpen(await publicHold(s, slot(date, '18:00')));
  });

  test('the public book checks the slot again: a hold whose hours closed meanwhile is 400 (not open)', async () => {
    const s = await publicSetup();
    const held = await publicHeld(s, slot(dayAhead(), '10:00'));
    const afternoons = Object.fromEntries(Object.keys(EVERY_DAY).map((day) => [day, [{ start: '13:00', end: '17:00' }]]));
    const closed = await context.app.inject({ method: 'PUT', url: `/v3/location/${s.locationId}`, headers: s.headers, payload: { weeklyAvailability: afternoons } });
    assert.equal(closed.statusCode, 200, closed.body);
    assertNotOpen(await publicBook(s, held.id, { name: 'Late Comer', email: `late-${randomUUID()}@example.com` }));
    assert.equal(await statusOf(s, held.id), 'IN');
  });

  test('a service with showOnline false is 400 on the public hold (the dashboard may still hold it)', async () => {
    const s = await publicSetup({ service: { showOnline: false } });
    const date = dayAhead();
    const response = await publicHold(s, slot(date, '10:00'));
    const body = assertBadRequest(response);
    assert.equal(body.errors[0]?.path, 'ServiceId');
    assert.match(body.message, new RegExp(s.serviceId));
    const list = await listedIds(s.headers);
    assert.deepEqual(list, [], 'nothing was held');
    assert.equal((await request(s, 'hold', slot(date, '10:00'))).statusCode, 201);
  });

  test('a public hold counts against the slot capacity', async () => {
    const s = await publicSetup({ service: { bookingsPerSlot: 2 } });
    const date = dayAhead();
    await publicHeld(s, slot(date, '10:00'));
    assert.ok((await freeTimes(s, date)).includes('10:00'), 'one place left');
    await create(s, slot(date, '10:00'));
    assert.ok(!(await freeTimes(s, date)).includes('10:00'), 'the public hold and the booking fill the slot');
    assertBadRequest(await request(s, 'create', slot(date, '10:00')), 'BOOKING-105');
    assertBadRequest(await publicHold(s, slot(date, '10:00')), 'BOOKING-105');
  });

  test('the booking rules apply to the public hold: past, lead time, book-ahead, duration, daily limit', async () => {
    const s = await publicSetup({ service: { bookInAdvance: 10_080, bookAheadUnit: 'days', bookAheadValue: 30, dailyBookingLimitCount: 1 } });
    assertBadRequest(await publicHold(s, slot(dayAhead(-1), '10:00')), 'BOOKING-103');
    assertBadRequest(await publicHold(s, slot(dayAhead(3), '10:00')), 'BOOKING-104');
    assertBadRequest(await publicHold(s, slot(dayAhead(60), '10:00')), 'BOOKING-100');
    assertBadRequest(await publicHold(s, slot(dayAhead(), '10:00', 30)), 'BOOKING-140');
    assertNotOpen(await publicHold(s, slot(dayAhead(), '10:30')));
    await publicHeld(s, slot(dayAhead(), '10:00'));
    assertBadRequest(await publicHold(s, slot(dayAhead(), '14:00')), 'BOOKING-106');
    assertBadRequest(await request(s, 'create', slot(dayAhead(), '14:00')), 'BOOKING-106');
    assert.equal((await listedIds(s.headers)).length, 1);
  });

  test('a single-place slot held publicly cannot be booked through the dashboard', async () => {
    const s = await publicSetup();
    const date = dayAhead();
    await publicHeld(s, slot(date, '11:00'));
    assertBadRequest(await request(s, 'create', slot(date, '11:00')), 'BOOKING-105');
    assertBadRequest(await request(s, 'hold', slot(date, '11:00')), 'BOOKING-105');
  });

  test('a missing or unlisted origin is 403 and a bad client id is 401, on hold and on book', async () => {
    const s = await publicSetup();
    const date = dayAhead();
    const clientId = s.tenant.publicClientId;
    assertError(await publicHold(s, slot(date, '10:00'), { 'x-client-id': clientId }), 403);
    assertError(await publicHold(s, slot(date, '10:00'), { 'x-client-id': clientId, origin: 'https://evil.example.com' }), 403);
    assertError(await publicHold(s, slot(date, '10:00'), { origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    assertError(await publicHold(s, slot(date, '10:00'), { 'x-client-id': `${clientId}x`, origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    // Dashboard credentials do not stand in for the client id.
    assertError(await publicHold(s, slot(date, '10:00'), { ...s.headers, origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    assert.deepEqual(await listedIds(s.headers), [], 'nothing was held');

    const held = await publicHeld(s, slot(date, '10:00'));
    const details = { name: 'Mary Shelley', email: `mary-${randomUUID()}@example.com` };
    assertError(await publicBook(s, held.id, details, { 'x-client-id': clientId }), 403);
    assertError(await publicBook(s, held.id, details, { 'x-client-id': 'pub_unknown', origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    assert.equal(await statusOf(s, held.id), 'IN');
  });

  test('a public caller cannot book a hold made through the authenticated route (404)', async () => {
    const s = await publicSetup();
    const held = await hold(s, { ...slot(dayAhead(), '10:00'), CustomerId: undefined });
    const response = await publicBook(s, held.id, { name: 'Mary Shelley', email: `mary-${randomUUID()}@example.com` });
    assertError(response, 404);
    assert.equal(await statusOf(s, held.id), 'IN');
  });

  test('a public caller cannot book another company\'s appointment (404)', async () => {
    const s = await publicSetup();
    const other = await publicSetup();
    const held = await publicHeld(other, slot(dayAhead(), '10:00'));
    const details = { name: 'Mary Shelley', email: `mary-${randomUUID()}@example.com` };
    assertError(await publicBook(s, held.id, details), 404);
    assert.equal(await statusOf(other, held.id), 'IN');
    // The rightful company can still book it.
    assert.equal((await publicBook(other, held.id, details)).statusCode, 200);
  });

  test('the public book body is validated: name and email are required, email must be an email', async () => {
    const s = await publicSetup();
    const held = await publicHeld(s, slot(dayAhead(), '10:00'));
    const email = `mary-${randomUUID()}@example.com`;
    const missingEmail = assertBadRequest(await publicBook(s, held.id, { name: 'Mary Shelley' }));
    assert.ok(missingEmail.errors.some((e) => e.path === 'email'), JSON.stringify(missingEmail.errors));
    const badEmail = assertBadRequest(await publicBook(s, held.id, { name: 'Mary Shelley', email: 'not-an-email' }));
    assert.ok(badEmail.errors.some((e) => e.path === 'email'), JSON.stringify(badEmail.errors));
    const missingName = assertBadRequest(await publicBook(s, held.id, { email }));
    assert.ok(missingName.errors.some((e) => e.path === 'name'), JSON.stringify(missingName.errors));
    assertBadRequest(await publicBook(s, held.id, { name: 'Mary Shelley', email, CustomerId: s.customerId }));
    assertBadRequest(await publicBook(s, held.id, {}));
    assert.equal(await statusOf(s, held.id), 'IN');
    assert.deepEqual(await customersByEmail(s, email), [], 'no customer was created');
  });

  test('the public book of an expired hold is 400 BOOKING-111', async () => {
    const s = await publicSetup();
    const held = await publicHeld(s, slot(dayAhead(), '10:00'));
    await expireHold(s, held.id);
    const email = `late-${randomUUID()}@example.com`;
    assertBadRequest(await publicBook(s, held.id, { name: 'Late Comer', email }), 'BOOKING-111');
    assert.equal(await statusOf(s, held.id), 'IN');
    assert.deepEqual(await events(s, held.id), []);
  });

  test('a public book of an already booked appointment is 400 BOOKING-108', async () => {
    const s = await publicSetup();
    const held = await publicHeld(s, slot(dayAhead(), '10:00'));
    const details = { name: 'Mary Shelley', email: `mary-${randomUUID()}@example.com` };
    assert.equal((await publicBook(s, held.id, details)).statusCode, 200);
    assertBadRequest(await publicBook(s, held.id, details), 'BOOKING-108');
    assert.deepEqual(await events(s, held.id), ['NEW_APPOINTMENT']);
  });

  test('customer limits apply at the public book: with bookingLimit 1 a second booking by the same email is BOOKING-113', async () => {
    const s = await publicSetup({ service: { bookingLimit: 1 } });
    const date = dayAhead();
    const email = `mary-${randomUUID()}@example.com`;
    const first = await publicHeld(s, slot(date, '10:00'));
    const booked = await publicBook(s, first.id, { name: 'Mary Shelley', email });
    assert.equal(booked.statusCode, 200, booked.body);

    const second = await publicHeld(s, slot(date, '12:00'));
    assertBadRequest(await publicBook(s, second.id, { name: 'Mary Shelley', email: email.toUpperCase() }), 'BOOKING-113');
    assert.equal(await statusOf(s, second.id), 'IN');
    assert.equal((await customersByEmail(s, email)).length, 1);
    // Another customer may book the same hold.
    const other = await publicBook(s, second.id, { name: 'Percy Shelley', email: `percy-${randomUUID()}@example.com` });
    assert.equal(other.statusCode, 200, other.body);
    assert.notEqual(json<Appointment>(other).customerId, json<Appointment>(booked).customerId);
  });

  test('concurrent public books by the same email on holds of different resources: bookingLimit 1 lets exactly one through', async () => {
    const s = await publicSetup({ service: { bookingLimit: 1 }, resources: [{}, {}, {}, {}, {}] });
    const existing = await context.app.inject({ method: 'GET', url: `/v3/customer/${s.customerId}`, headers: s.headers });
    const email: string = json(existing).email;
    const holds: Appointment[] = [];
    for (const resourceId of s.resourceIds) holds.push(await publicHeld(s, { ...slot(dayAhead(), '10:00'), ResourceIds: [resourceId] }));
    const responses = await Promise.all(holds.map((held) => publicBook(s, held.id, { name: 'Ada Lovelace', email })));
    const outcomes = responses.map((r) => (r.statusCode === 200 ? 'BK' : `${r.statusCode} ${json(r).code}`));
    assert.deepEqual(outcomes.filter((o) => o === 'BK').length, 1, outcomes.join(', '));
    assert.deepEqual(outcomes.filter((o) => o !== 'BK'), Array(holds.length - 1).fill('400 BOOKING-113'), outcomes.join(', '));
    assert.deepEqual(await listedIds(s.headers, '&status=BK').then((ids) => ids.length), 1);
  });
});

describe('machine tokens', () => {
  test('a read token cannot create, hold or change appointments (403) but can read them', async () => {
    const s = await setup(context);
    const date = dayAhead();
    const existing = await create(s, slot(date, '09:00'));
    const read = { authorization: `Bearer ${await machineToken(context.app, s.tenant, 'read')}` };
    assertError(await request(s, 'create', slot(date, '10:00'), read), 403);
    assertError(await request(s, 'hold', slot(date, '10:00'), read), 403);
    assertError(await operate(s, existing.id, 'cancel', undefined, read), 403);
    assert.equal((await get(s, existing.id, read)).statusCode, 200);
    assert.deepEqual(await listedIds(read), [existing.id]);
    assert.deepEqual(await listedIds(s.headers), [existing.id], 'the refused writes stored nothing');
    assert.equal(await statusOf(s, existing.id), 'BK');
  });

  test('a write token can create and read', async () => {
    const s = await setup(context);
    const date = dayAhead();
    const write = { authorization: `Bearer ${await machineToken(context.app, s.tenant, 'write')}` };
    const response = await request(s, 'create', slot(date, '10:00'), write);
    assert.equal(response.statusCode, 201, response.body);
    const created = json<Appointment>(response);
    assert.equal(created.status, 'BK');
    assert.equal(created.companyId, s.tenant.companyId);
    const read = await get(s, created.id, write);
    assert.equal(read.statusCode, 200, read.body);
    assert.equal(json<Appointment>(read).id, created.id);
    assert.deepEqual(await listedIds(write), [created.id]);
    assert.deepEqual(await cursorIds(write), [created.id]);
    const cancelled = await operate(s, created.id, 'cancel', undefined, write);
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(json<Appointment>(cancelled).status, 'CN');
  });
});

describe('location scope', () => {
  test('a user limited to location A: 403 creating at B, 404 on B\'s appointments, lists show only A', async () => {
    const a = await setup(context);
    const b = await secondSite(a);
    const date = dayAhead();
    const atA = await create(a, slot(date, '10:00'));
    const atB = await create(b, slot(date, '10:00'));
    const heldAtB = await hold(b, slot(date, '12:00'));

    const member = await addMember(context, a.tenant, 'User');
    await adjustUsers(a, [{ id: member.userId, locationAccessMode: 'LOCATIONS', allowedLocationIds: [a.locationId] }]);
    const scoped = member.headers;

    assertError(await request(b, 'create', slot(date, '14:00'), scoped), 403);
    assertError(await request(b, 'hold', slot(date, '14:00'), scoped), 403);
    const own = await request(a, 'create', slot(date, '14:00'), scoped);
    assert.equal(own.statusCode, 201, own.body);
    const ownId = json<Appointment>(own).id;

    assertError(await get(b, atB.id, scoped), 404);
    assertError(await operate(b, atB.id, 'cancel', undefined, scoped), 404);
    assertError(await operate(b, atB.id, '', { notes: 'peek' }, scoped), 404);
    assertError(await operate(b, atB.id, 'confirm', undefined, scoped), 404);
    assertError(await operate(b, atB.id, 'reschedule', slot(date, '15:00'), scoped), 404);
    assertError(await operate(b, heldAtB.id, 'book', undefined, scoped), 404);
    assertError(await context.app.inject({ method: 'DELETE', url: `/v3/appointment/${heldAtB.id}`, headers: scoped }), 404);
    assert.equal(await statusOf(b, atB.id), 'BK');
    assert.equal(await statusOf(b, heldAtB.id), 'IN');
    assert.equal(json<Appointment>(await get(b, atB.id)).notes, null);

    assert.equal((await get(a, atA.id, scoped)).statusCode, 200);
    assert.deepEqual(await listedIds(scoped), sorted(atA.id, ownId));
    assert.deepEqual(await cursorIds(scoped), sorted(atA.id, ownId));
    // Asking for location B shows nothing of it.
    const forB = await context.app.inject({ method: 'GET', url: `/v3/appointments?LocationId=${b.locationId}`, headers: scoped });
    if (forB.statusCode === 200) assert.deepEqual(json(forB).data, []);
    else assertError(forB, 403);
    const cursorForB = await context.app.inject({ method: 'GET', url: `/v3/appointments/cursor?LocationId=${b.locationId}`, headers: scoped });
    if (cursorForB.statusCode === 200) assert.deepEqual(json(cursorForB).data, []);
    else assertError(cursorForB, 403);
    // The owner sees everything.
    assert.deepEqual(await listedIds(a.headers), sorted(atA.id, atB.id, heldAtB.id, ownId));
  });
});

describe('Resource role', () => {
  test('a Resource-role user linked to R1 books only R1 and sees only appointments with R1', async () => {
    const s = await setup(context, { resources: [{}, {}] });
    const [r1, r2] = s.resourceIds as [string, string];
    const date = dayAhead();
    const ownersOnR1 = await create(s, { ...slot(date, '09:00'), ResourceIds: [r1] });
    const onR2 = await create(s, { ...slot(date, '09:00'), ResourceIds: [r2] });
    const heldOnR2 = await hold(s, { ...slot(date, '11:00'), ResourceIds: [r2] });

    const member = await addMember(context, s.tenant, 'Resource');
    await adjustUsers(s, [{ id: member.userId, role: 'Resource', linkedResourceId: r1 }]);
    const headers = member.headers;

    const booked = await request(s, 'create', { ...slot(date, '10:00'), ResourceIds: [r1] }, headers);
    assert.equal(booked.statusCode, 201, booked.body);
    const mine = json<Appointment>(booked);
    assert.deepEqual(mine.resourceIds, [r1]);
    assertError(await request(s, 'create', { ...slot(date, '12:00'), ResourceIds: [r2] }, headers), 403);
    assertError(await request(s, 'hold', { ...slot(date, '12:00'), ResourceIds: [r2] }, headers), 403);
    assertError(await request(s, 'create', { ...slot(date, '12:00'), ResourceIds: [r1, r2] }, headers), 403);

    assert.equal((await get(s, ownersOnR1.id, headers)).statusCode, 200);
    assertError(await get(s, onR2.id, headers), 404);
    assertError(await operate(s, onR2.id, 'cancel', undefined, headers), 404);
    assertError(await operate(s, heldOnR2.id, 'book', undefined, headers), 404);
    assertError(await context.app.inject({ method: 'DELETE', url: `/v3/appointment/${heldOnR2.id}`, headers }), 404);
    assert.equal(await statusOf(s, onR2.id), 'BK');
    assert.equal(await statusOf(s, heldOnR2.id), 'IN');

    const visible = sorted(ownersOnR1.id, mine.id);
    assert.deepEqual(await listedIds(headers), visible);
    assert.deepEqual(await listedIds(headers, `&ResourceId=${r2}`).then((ids) => ids.filter((id) => id === onR2.id || id === heldOnR2.id)), []);
    assert.deepEqual(await cursorIds(headers), visible);
    assert.deepEqual(await listedIds(s.headers), sorted(ownersOnR1.id, onR2.id, heldOnR2.id, mine.id));
  });
});

describe('tenant isolation', () => {
  test('another company\'s LocationId, ServiceId, ResourceIds or CustomerId in a create is 400 naming the value', async () => {
    const s = await setup(context);
    const other = await setup(context);
    const date = dayAhead();
    const cases: Array<{ label: string; target: Setup; body: Record<string, unknown>; path: string; value: string }> = [
      { label: 'LocationId', target: { ...s, locationId: other.locationId }, body: {}, path: 'LocationId', value: other.locationId },
      { label: 'ServiceId', target: { ...s, serviceId: other.serviceId }, body: {}, path: 'ServiceId', value: other.serviceId },
      { label: 'ResourceIds', target: s, body: { ResourceIds: [other.resourceIds[0]] }, path: 'ResourceIds.0', value: other.resourceIds[0]! },
      { label: 'CustomerId', target: s, body: { CustomerId: other.customerId }, path: 'CustomerId', value: other.customerId },
    ];
    for (const { label, target, body, path, value } of cases) {
      for (const kind of ['create', 'hold'] as const) {
        const response = await request(target, kind, { ...slot(date, '10:00'), ...body });
        const error = assertBadRequest(response);
        assert.ok(error.errors.some((e) => e.path === path && e.msg.includes(value)), `${kind} with ${label}: ${response.body}`);
        assert.match(error.message, new RegExp(value), `${kind} with ${label}`);
      }
    }
    assert.deepEqual(await listedIds(s.headers), []);
    assert.deepEqual(await listedIds(other.headers), []);
  });

  test('another company\'s ids in book, update and reschedule bodies are 400 naming the value', async () => {
    const s = await setup(context);
    const other = await setup(context);
    const date = dayAhead();
    const held = await hold(s, { ...slot(date, '10:00'), CustomerId: undefined });
    const booked = await create(s, slot(date, '12:00'));
    const cases: Array<[string, () => Promise<LightMyRequestResponse>, string, string]> = [
      ['book CustomerId', () => operate(s, held.id, 'book', { CustomerId: other.customerId }), 'CustomerId', other.customerId],
      ['update CustomerId', () => operate(s, booked.id, '', { CustomerId: other.customerId }), 'CustomerId', other.customerId],
      ['reschedule ResourceIds', () => operate(s, booked.id, 'reschedule', { ...slot(date, '14:00'), ResourceIds: [other.resourceIds[0]] }), 'ResourceIds.0', other.resourceIds[0]!],
    ];
    for (const [label, call, path, value] of cases) {
      const response = await call();
      const error = assertBadRequest(response);
      assert.ok(error.errors.some((e) => e.path === path && e.msg.includes(value)), `${label}: ${response.body}`);
    }
    assert.equal(await statusOf(s, held.id), 'IN');
    const after = json<Appointment>(await get(s, booked.id));
    assert.deepEqual([after.status, after.customerId], ['BK', s.customerId]);
  });

  test('another company\'s appointment id in any path is 404 and leaves it unchanged', async () => {
    const s = await setup(context);
    const other = await setup(context);
    const date = dayAhead();
    const booked = await create(other, slot(date, '10:00'));
    const held = await hold(other, slot(date, '12:00'));
    const calls: Array<[string, () => Promise<LightMyRequestResponse>]> = [];
    for (const id of [booked.id, held.id]) {
      calls.push(
        [`GET ${id}`, () => get(s, id)],
        [`PUT ${id}`, () => operate(s, id, '', { notes: 'mine now' })],
        [`PATCH ${id}`, () => context.app.inject({ method: 'PATCH', url: `/v3/appointment/${id}`, headers: s.headers, payload: { notes: 'mine now' } })],
        [`DELETE ${id}`, () => context.app.inject({ method: 'DELETE', url: `/v3/appointment/${id}`, headers: s.headers })],
        [`reserve ${id}`, () => operate(s, id, 'reserve', {})],
        [`book ${id}`, () => operate(s, id, 'book', { CustomerId: s.customerId })],
        [`confirm ${id}`, () => operate(s, id, 'confirm')],
        [`cancel ${id}`, () => operate(s, id, 'cancel')],
        [`reschedule ${id}`, () => operate(s, id, 'reschedule', slot(date, '14:00'))],
      );
    }
    for (const [label, call] of calls) {
      const response = await call();
      assert.equal(response.statusCode, 404, `${label}: ${response.body}`);
    }
    const after = await get(other, booked.id);
    assert.equal(json<Appointment>(after).status, 'BK');
    assert.equal(json<Appointment>(after).notes, null);
    assert.equal(json<Appointment>(after).confirmed, false);
    assert.equal(await statusOf(other, held.id), 'IN');
    assert.deepEqual(await events(other, booked.id), ['NEW_APPOINTMENT']);
    assert.deepEqual(await listedIds(s.headers), []);
    assert.deepEqual(await listedIds(other.headers), sorted(booked.id, held.id));
  });
});

test('the OpenAPI document lists every appointment route', async () => {
  const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(response.statusCode, 200, response.body);
  const paths: Record<string, Record<string, unknown>> = json(response).paths;
  const expected: Array<[string, string]> = [
    ['post', '/v3/appointment'],
    ['post', '/v3/appointment/hold'],
    ['get', '/v3/appointment/{id}'],
    ['put', '/v3/appointment/{id}'],
    ['patch', '/v3/appointment/{id}'],
    ['delete', '/v3/appointment/{id}'],
    ['put', '/v3/appointment/{id}/reserve'],
    ['put', '/v3/appointment/{id}/book'],
    ['put', '/v3/appointment/{id}/confirm'],
    ['put', '/v3/appointment/{id}/cancel'],
    ['put', '/v3/appointment/{id}/reschedule'],
    ['get', '/v3/appointments'],
    ['get', '/v3/appointments/cursor'],
    ['post', '/v3/public/appointment/hold'],
    ['put', '/v3/public/appointment/{id}/book'],
  ];
  const missing = expected.filter(([method, path]) => !paths[path]?.[method]).map(([method, path]) => `${method.toUpperCase()} ${path}`);
  assert.deepEqual(missing, []);
});

test('a CustomerId in the query of a public hold is ignored: a booking page never names a customer (no 500, no hold under someone)', async () => {
  const s = await publicSetup();
  const times = ['09:00', '10:00', '11:00'];
  for (const [index, extra] of ['CustomerId=not-a-uuid', 'CustomerId=a&CustomerId=b', `CustomerId=${s.customerId}`].entries()) {
    const response = await context.app.inject({
      method: 'POST',
      url: `/v3/public/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}&${extra}`,
      headers: publicHeaders(s),
      payload: { ResourceIds: [s.resourceIds[0]], ...slot(dayAhead(), times[index]!) },
    });
    assert.equal(response.statusCode, 201, `${extra}: ${response.body}`);
    assert.equal(json(response).customerId, null, 'the hold belongs to no customer until it is booked');
  }
});
