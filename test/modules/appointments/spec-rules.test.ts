// Rules of docs/api.md (Appointments, Availability) not covered elsewhere: a hold's expiry follows
// the location's bookingTimerMinutes, idempotency keys live 24 hours, availability with CustomerId
// leaves out a resource at maxResourceBookingLimit, a weekly allocation's bookingsPerSlot sets the
// capacity of its service and resource, and a time zone name that ICU knows but PostgreSQL may not
// never turns a booking or an availability search into a 500.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { insertAppointment } from '../../helpers/rows.js';
import { EVERY_DAY } from '../../helpers/world.js';
import { assertBadRequest, create, dayAhead, hold, newCustomer, operate, request, setup, slot } from './fixtures.js';
import type { Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const withKey = (s: Setup, key: string) => ({ ...s.headers, 'idempotency-key': key });

interface Availability {
  timezoneName: string;
  availableTimes: Array<{ startTime: string; endTime: string; resourceIds: string[]; remaining: number }>;
}

function availability(s: Setup, query: Record<string, string>): Promise<LightMyRequestResponse> {
  const params = new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, ...query });
  return s.context.app.inject({ method: 'GET', url: `/v3/availability?${params}`, headers: s.headers });
}

async function available(s: Setup, query: Record<string, string>): Promise<Availability> {
  const response = await availability(s, query);
  assert.equal(response.statusCode, 200, response.body);
  return json<Availability>(response);
}

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

// ---------------------------------------------------------------------------------------------

test('a hold expires bookingTimerMinutes after now, with a non-default timer of 3 minutes', async () => {
  const s = await setup(context, { location: { bookingTimerMinutes: 3 } });
  const location = json(await context.app.inject({ method: 'GET', url: `/v3/location/${s.locationId}`, headers: s.headers }));
  assert.equal(location.bookingTimerMinutes, 3);

  const before_ = Date.now();
  const held = await hold(s, slot(dayAhead(), '10:00'));
  const after_ = Date.now();
  assert.equal(held.status, 'IN');
  assert.ok(held.expiresAt, 'a hold has an expiry');
  const expiresAt = Date.parse(held.expiresAt);
  const threeMinutes = 3 * 60_000;
  // Within a few seconds of now + 3 minutes (and clearly not the default 10).
  assert.ok(expiresAt >= before_ + threeMinutes - 5_000, `${held.expiresAt} is at least now + 3 min`);
  assert.ok(expiresAt <= after_ + threeMinutes + 5_000, `${held.expiresAt} is at most now + 3 min`);
});

test('idempotency keys are kept 24 hours: a key older than that is free for a different or the same request', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const db = context.database.db;
  const age = (key: string) =>
    db
      .updateTable('idempotencyKeys')
      .set({ createdAt: new Date(Date.now() - 25 * 3_600_000) })
      .where('companyId', '=', s.tenant.companyId)
      .where('key', '=', key)
      .executeTakeFirstOrThrow();

  // A different request under an aged key is a new request (201), not a mismatch (400).
  const key = `expired-different-${randomUUID()}`;
  const first = await request(s, 'create', slot(date, '10:00'), withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);
  // Within 24 hours the different request is refused...
  assertBadRequest(await request(s, 'create', slot(date, '11:00'), withKey(s, key)));
  const aged = await age(key);
  assert.equal(Number(aged.numUpdatedRows), 1, 'the key row was aged');
  // ...after them it is accepted.
  const different = await request(s, 'create', slot(date, '11:00'), withKey(s, key));
  assert.equal(different.statusCode, 201, `a key older than 24 hours must be free, got: ${different.body}`);
  assert.equal(different.headers['idempotent-replayed'], undefined);
  assert.notEqual(json(different).id, json(first).id);

  // The same request under an aged key books again (a new id) instead of replaying.
  const sameKey = `expired-same-${randomUUID()}`;
  const body = slot(date, '13:00');
  const original = await request(s, 'create', body, withKey(s, sameKey));
  assert.equal(original.statusCode, 201, original.body);
  // Cancel it so the slot is free: within 24 hours the retry still replays it...
  assert.equal((await operate(s, json(original).id, 'cancel')).statusCode, 200);
  const replay = await request(s, 'create', body, withKey(s, sameKey));
  assert.equal(replay.statusCode, 201, replay.body);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(json(replay).id, json(original).id);
  // ...after 24 hours it is a new booking.
  await age(sameKey);
  const fresh = await request(s, 'create', body, withKey(s, sameKey));
  assert.equal(fresh.statusCode, 201, `the same request under an expired key must book anew, got: ${fresh.body}`);
  assert.equal(fresh.headers['idempotent-replayed'], undefined);
  assert.notEqual(json(fresh).id, json(original).id);
  assert.equal(json(fresh).status, 'BK');
  // And the key now replays the new booking.
  const again = await request(s, 'create', body, withKey(s, sameKey));
  assert.equal(again.headers['idempotent-replayed'], 'true');
  assert.equal(json(again).id, json(fresh).id);
});

test('availability with CustomerId leaves out a resource at maxResourceBookingLimit; without it both resources appear', async () => {
  const s = await setup(context, { service: { maxResourceBookingLimit: 1 }, resources: [{}, {}] });
  const [a, b] = s.resourceIds as [string, string];
  const date = dayAhead();
  await create(s, { ...slot(date, '10:00'), ResourceIds: [a] });

  const forCustomer = await available(s, { startDate: date, CustomerId: s.customerId });
  assert.ok(forCustomer.availableTimes.length > 0, 'the customer still has slots with resource B');
  for (const slotOffered of forCustomer.availableTimes) {
    assert.ok(!slotOffered.resourceIds.includes(a), `resource A is at the customer's limit: ${JSON.stringify(slotOffered)}`);
    assert.deepEqual(slotOffered.resourceIds, [b]);
  }
  // Resource B is free at 10:00 too, so the customer still sees that time (with B only).
  const at10 = DateTime.fromISO(`${date}T10:00`, { zone: s.zone }).toUTC().toISO();
  assert.ok(forCustomer.availableTimes.some((t) => t.startTime === at10));

  // Another customer, or no customer at all, sees both resources.
  const queries: Array<Record<string, string>> = [{ startDate: date }, { startDate: date, CustomerId: await newCustomer(s) }];
  for (const query of queries) {
    const body = await available(s, query);
    const withA = body.availableTimes.filter((t) => t.resourceIds.includes(a));
    const withB = body.availableTimes.filter((t) => t.resourceIds.includes(b));
    assert.ok(withA.length > 0, `resource A appears for ${JSON.stringify(query)}`);
    assert.ok(withB.length > 0, `resource B appears for ${JSON.stringify(query)}`);
    // A is busy at 10:00 itself.
    assert.ok(!withA.some((t) => t.startTime === at10));
  }
});

test('a weekly allocation scoped by service and resource sets the capacity: two holds fit a slot, the third is BOOKING-105', async () => {
  const s = await setup(context, { service: { availabilityType: 'allocation' } });
  const date = dayAhead();
  const day = WEEKDAYS[DateTime.fromISO(date, { zone: 'UTC' }).weekday - 1]!;
  const url = `/v3/weeklyAllocation/setWeeklyAllocations?${new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, ResourceId: s.resourceIds[0]! })}`;
  const set = await context.app.inject({ method: 'POST', url, headers: s.headers, payload: { allocations: [{ day, start: '09:00', end: '17:00', bookingsPerSlot: 2 }] } });
  assert.equal(set.statusCode, 200, set.body);
  assert.deepEqual(
    json(set).data.map((r: { day: string; bookingsPerSlot: number | null }) => [r.day, r.bookingsPerSlot]),
    [[day, 2]],
  );

  const at10 = DateTime.fromISO(`${date}T10:00`, { zone: s.zone }).toUTC().toISO();
  const remainingAt10 = async () => (await available(s, { startDate: date })).availableTimes.find((t) => t.startTime === at10)?.remaining ?? 0;
  assert.equal(await remainingAt10(), 2);

  const first = await hold(s, slot(date, '10:00'));
  assert.equal(await remainingAt10(), 1);
  const second = await request(s, 'hold', { ...slot(date, '10:00'), CustomerId: await newCustomer(s) });
  assert.equal(second.statusCode, 201, second.body);
  assert.deepEqual(json(second).resourceIds, first.resourceIds);
  assert.equal(await remainingAt10(), 0);
  assertBadRequest(await request(s, 'hold', { ...slot(date, '10:00'), CustomerId: await newCustomer(s) }), 'BOOKING-105');
  assertBadRequest(await request(s, 'create', { ...slot(date, '10:00'), CustomerId: await newCustomer(s) }), 'BOOKING-105');
  // Another slot of the allocation is untouched.
  await hold(s, { ...slot(date, '11:00'), CustomerId: await newCustomer(s) });
});

test('a location in US/Pacific-New (a zone alias ICU accepts and PostgreSQL may not) never answers 500', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const zone = 'US/Pacific-New';
  const created = await context.app.inject({
    method: 'POST',
    url: '/v3/location',
    headers,
    payload: { name: 'Pacific', timezoneName: zone, weeklyAvailability: EVERY_DAY },
  });
  if (created.statusCode !== 201) {
    // Refusing the zone up front is acceptable: then it can never reach PostgreSQL.
    const refused = assertBadRequest(created);
    assert.equal(refused.errors[0]?.path, 'timezoneName', created.body);
    return;
  }
  const locationId = json(created).id as string;
  const serviceId = await tenant.service({ locationIds: [locationId] });
  const resourceId = await tenant.resource({ locationIds: [locationId], serviceIds: [serviceId] });
  const s: Setup = { context, tenant, headers, locationId, serviceId, resourceIds: [resourceId], customerId: await tenant.customer(), zone };
  const date = dayAhead(14, zone);

  const notServerError = (response: LightMyRequestResponse, what: string) =>
    assert.ok([201, 400].includes(response.statusCode), `${what} answers 201 or 400, got ${response.statusCode}: ${response.body}`);

  const before_ = await availability(s, { startDate: date });
  assert.equal(before_.statusCode, 200, `availability before any booking: ${before_.body}`);

  const booked = await request(s, 'create', slot(date, '10:00', 60, zone));
  notServerError(booked, 'create');
  // Make sure an appointment exists on that day even if the create was refused, as a booking would.
  if (booked.statusCode !== 201) {
    const start = DateTime.fromISO(`${date}T10:00`, { zone });
    await insertAppointment(context.database.db, { companyId: tenant.companyId, locationId, serviceId, resourceIds: [resourceId], start, customerId: s.customerId });
  }

  const search = await availability(s, { startDate: date });
  assert.equal(search.statusCode, 200, `availability with an appointment that day answers 200, got ${search.statusCode}: ${search.body}`);
  const body = json<Availability>(search);
  assert.equal(body.timezoneName, zone);
  const at10 = DateTime.fromISO(`${date}T10:00`, { zone }).toUTC().toISO();
  assert.ok(!body.availableTimes.some((t) => t.startTime === at10), 'the booked time is not offered');
  // With the customer too (the per-customer limits read their bookings).
  const forCustomer = await availability(s, { startDate: date, CustomerId: s.customerId });
  assert.equal(forCustomer.statusCode, 200, forCustomer.body);

  // A hold and another booking on the same day, once one exists: still 201 or 400, never 500.
  notServerError(await request(s, 'hold', slot(date, '12:00', 60, zone)), 'hold');
  notServerError(await request(s, 'create', slot(date, '14:00', 60, zone)), 'a second create');
});
