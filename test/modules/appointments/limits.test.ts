// Booking limits and booking validation, each with an allowed and a refused case, on create, hold,
// reserve, book, reschedule and the metadata update wherever the rule applies: the per-customer and
// per-resource limits, the daily limits (and that booking a hold or a reservation checks them
// again), capacity per slot, the duration rules, lead time, ids that are not the company's,
// round robin NONE, the customer of a booking and the booking grid.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, assertNotOpen, create, dayAhead, freeTimes, hold, newCustomer, operate, request, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

/** The appointment of a 200 answer. */
function ok(response: LightMyRequestResponse): Appointment {
  assert.equal(response.statusCode, 200, response.body);
  return json<Appointment>(response);
}

/** A 400 with `code` (when given) whose first field error is at `path` (when given). */
function refused(response: LightMyRequestResponse, code: string | undefined, path?: string) {
  const body = assertBadRequest(response, code);
  if (path !== undefined) assert.equal(body.errors[0]?.path, path, response.body);
  return body;
}

async function updateService(s: Setup, fields: Record<string, unknown>) {
  const response = await s.context.app.inject({ method: 'PUT', url: `/v3/service/${s.serviceId}`, headers: s.headers, payload: fields });
  assert.equal(response.statusCode, 200, response.body);
}

/** Makes a hold expire now, as time passing would: both the appointment and its resource rows. */
async function expire(s: Setup, id: string): Promise<void> {
  const past = new Date(Date.now() - 60_000);
  const db = s.context.database.db;
  await db.updateTable('appointments').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('id', '=', id).execute();
  await db.updateTable('appointmentResources').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('appointmentId', '=', id).execute();
}

/** Slot body for `customerId` (and optionally a resource). */
function forCustomer(customerId: string, date: string, time: string, resourceId?: string, minutes = 60) {
  return { ...slot(date, time, minutes), CustomerId: customerId, ...(resourceId ? { ResourceIds: [resourceId] } : {}) };
}

// ---------------------------------------------------------------------------------------------
// bookingLimit: the customer's active appointments of the service (BK and unexpired IN).

test('bookingLimit: a BK counts on create and hold; another customer is not limited; CN does not count', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  const first = await create(s, slot(date, '10:00'));
  refused(await request(s, 'create', slot(date, '11:00')), 'BOOKING-113', 'CustomerId');
  refused(await request(s, 'hold', slot(date, '11:00')), 'BOOKING-113', 'CustomerId');
  refused(await request(s, 'create', slot(dayAhead(20), '11:00')), 'BOOKING-113', 'CustomerId');
  const other = await newCustomer(s);
  await create(s, forCustomer(other, date, '11:00'));
  ok(await operate(s, first.id, 'cancel'));
  await create(s, slot(date, '12:00'));
});

test('bookingLimit: an unexpired IN counts, an expired IN does not', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  const held = await hold(s, slot(date, '10:00'));
  refused(await request(s, 'create', slot(date, '11:00')), 'BOOKING-113', 'CustomerId');
  refused(await request(s, 'hold', slot(date, '11:00')), 'BOOKING-113', 'CustomerId');
  await expire(s, held.id);
  await create(s, slot(date, '11:00'));
});

test('bookingLimit: RS does not count; reserve is not refused by it; booking the RS counts it again', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  const held = await hold(s, slot(date, '10:00'));
  ok(await operate(s, held.id, 'reserve'));
  // The reservation does not count: a booking is allowed next to it.
  const booked = await create(s, slot(date, '11:00'));
  // Booking the reservation now makes two active appointments: refused, and it stays RS.
  refused(await operate(s, held.id, 'book', {}), 'BOOKING-113', 'CustomerId');
  refused(await operate(s, held.id, 'confirm'), 'BOOKING-113', 'CustomerId');
  assert.equal(json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${held.id}`, headers: s.headers })).status, 'RS');
  ok(await operate(s, booked.id, 'cancel'));
  assert.equal(ok(await operate(s, held.id, 'book', {})).status, 'BK');

  // Reserve does not count the new RS: with the limit lowered below what is active, a hold still reserves.
  const t = await setup(context, { service: { bookingLimit: 2 } });
  const tBooked = await create(t, slot(date, '10:00'));
  const tHeld = await hold(t, slot(date, '11:00'));
  await updateService(t, { bookingLimit: 1 });
  assert.equal(ok(await operate(t, tHeld.id, 'reserve')).status, 'RS');
  refused(await operate(t, tHeld.id, 'book', {}), 'BOOKING-113', 'CustomerId');
  ok(await operate(t, tBooked.id, 'cancel'));
  ok(await operate(t, tHeld.id, 'book', {}));
});

test('bookingLimit on book of a hold: the other active appointments count, the hold itself does not', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  const mine = await hold(s, slot(date, '10:00'));
  // Booking its own hold: allowed (it does not compete with itself).
  assert.equal(ok(await operate(s, mine.id, 'book', {})).status, 'BK');
  // An anonymous hold booked for the customer who already has an active booking: refused.
  const anonymous = await hold(s, { ...slot(date, '11:00'), CustomerId: undefined });
  refused(await operate(s, anonymous.id, 'book', { CustomerId: s.customerId }), 'BOOKING-113', 'CustomerId');
  assert.equal(ok(await operate(s, anonymous.id, 'book', { CustomerId: await newCustomer(s) })).status, 'BK');
});

test('bookingLimit on reschedule: the appointment itself does not count, other active ones do', async () => {
  const s = await setup(context, { service: { bookingLimit: 2 } });
  const date = dayAhead();
  const first = await create(s, slot(date, '10:00'));
  const second = await create(s, slot(date, '11:00'));
  await updateService(s, { bookingLimit: 1 });
  refused(await operate(s, first.id, 'reschedule', slot(date, '14:00')), 'BOOKING-113', 'CustomerId');
  ok(await operate(s, second.id, 'cancel'));
  const moved = ok(await operate(s, first.id, 'reschedule', slot(date, '14:00')));
  // And again, with the limit exactly reached by the appointment being moved.
  ok(await operate(s, moved.id, 'reschedule', slot(date, '15:00')));
});

test('bookingLimit on the metadata update: giving an active appointment to a customer at the limit is refused', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  await create(s, slot(date, '10:00'));
  const other = await newCustomer(s);
  const theirs = await create(s, forCustomer(other, date, '11:00'));
  refused(await operate(s, theirs.id, '', { CustomerId: s.customerId }), 'BOOKING-113', 'CustomerId');
  const unchanged = json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${theirs.id}`, headers: s.headers }));
  assert.equal(unchanged.customerId, other);
  // Notes on an appointment at the limit: it does not count against itself.
  assert.equal(ok(await operate(s, theirs.id, '', { notes: 'fine' })).notes, 'fine');
  const fresh = await newCustomer(s);
  assert.equal(ok(await operate(s, theirs.id, '', { CustomerId: fresh })).customerId, fresh);
  // A held one too (IN counts); a reservation does not.
  const theirHold = await hold(s, forCustomer(other, date, '12:00'));
  refused(await operate(s, theirHold.id, '', { CustomerId: s.customerId }), 'BOOKING-113', 'CustomerId');
  ok(await operate(s, theirHold.id, 'reserve'));
  assert.equal(ok(await operate(s, theirHold.id, '', { CustomerId: s.customerId })).customerId, s.customerId);
});

test('bookingLimit on the metadata update: an appointment that holds no slot (CN, an expired IN) is not re-checked', async () => {
  const s = await setup(context, { service: { bookingLimit: 1 } });
  const date = dayAhead();
  await create(s, slot(date, '10:00'));
  const other = await newCustomer(s);
  // Cancelled: it no longer counts, so handing it to a customer at the limit is allowed.
  const cancelled = await create(s, forCustomer(other, date, '11:00'));
  ok(await operate(s, cancelled.id, 'cancel'));
  assert.equal(ok(await operate(s, cancelled.id, '', { CustomerId: s.customerId })).customerId, s.customerId);
  // A hold whose timer ran out: the same.
  const lapsed = await hold(s, forCustomer(other, date, '12:00'));
  const past = new Date(Date.now() - 60_000);
  await context.database.db.updateTable('appointments').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('id', '=', lapsed.id).execute();
  await context.database.db.updateTable('appointmentResources').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('appointmentId', '=', lapsed.id).execute();
  assert.equal(ok(await operate(s, lapsed.id, '', { CustomerId: s.customerId })).customerId, s.customerId);
});

// ---------------------------------------------------------------------------------------------
// maxBookingLimit: the customer's appointments of the service ever, RE not counted (CN counts).

test('maxBookingLimit: refused on create and hold once reached; CN counts; another customer is not limited', async () => {
  const s = await setup(context, { service: { maxBookingLimit: 2 } });
  const date = dayAhead();
  const first = await create(s, slot(date, '10:00'));
  await hold(s, slot(date, '11:00'));
  refused(await request(s, 'create', slot(date, '12:00')), 'BOOKING-113', 'CustomerId');
  refused(await request(s, 'hold', slot(date, '12:00')), 'BOOKING-113', 'CustomerId');
  // Cancelled is still not RE: it keeps counting.
  ok(await operate(s, first.id, 'cancel'));
  refused(await request(s, 'create', slot(date, '12:00')), 'BOOKING-113', 'CustomerId');
  await create(s, forCustomer(await newCustomer(s), date, '12:00'));
});

test('maxBookingLimit: RE does not count, so a rescheduled appointment leaves room for one more', async () => {
  const s = await setup(context, { service: { maxBookingLimit: 2 } });
  const date = dayAhead();
  const first = await create(s, slot(date, '10:00'));
  // Rescheduling at the limit is allowed: the appointment does not count against itself.
  const moved = ok(await operate(s, first.id, 'reschedule', slot(date, '11:00')));
  // The RE original and its replacement count once.
  await create(s, slot(date, '12:00'));
  refused(await request(s, 'create', slot(date, '13:00')), 'BOOKING-113', 'CustomerId');
  // And at the limit, the replacement can still be moved again.
  ok(await operate(s, moved.id, 'reschedule', slot(date, '14:00')));
});

test('maxBookingLimit on reserve, book, reschedule and the metadata update', async () => {
  const s = await setup(context, { service: { maxBookingLimit: 2 } });
  const date = dayAhead();
  const held = await hold(s, slot(date, '10:00'));
  const booked = await create(s, slot(date, '11:00'));
  await updateService(s, { maxBookingLimit: 1 });
  // reserve: the other appointment counts (RS is exempt only from bookingLimit).
  refused(await operate(s, held.id, 'reserve', {}), 'BOOKING-113', 'CustomerId');
  refused(await operate(s, held.id, 'book', {}), 'BOOKING-113', 'CustomerId');
  refused(await operate(s, booked.id, 'reschedule', slot(date, '14:00')), 'BOOKING-113', 'CustomerId');
  await updateService(s, { maxBookingLimit: 2 });
  ok(await operate(s, held.id, 'reserve', {}));
  ok(await operate(s, held.id, 'book', {}));

  // book of an anonymous hold for a customer at the limit; allowed for another customer.
  const t = await setup(context, { service: { maxBookingLimit: 1 } });
  await create(t, slot(date, '10:00'));
  const anonymous = await hold(t, { ...slot(date, '11:00'), CustomerId: undefined });
  refused(await operate(t, anonymous.id, 'book', { CustomerId: t.customerId }), 'BOOKING-113', 'CustomerId');
  const other = await newCustomer(t);
  ok(await operate(t, anonymous.id, 'book', { CustomerId: other }));
  // metadata update: handing the other customer's booking to the first customer is refused.
  refused(await operate(t, anonymous.id, '', { CustomerId: t.customerId }), 'BOOKING-113', 'CustomerId');
  assert.equal(ok(await operate(t, anonymous.id, '', { notes: 'kept' })).customerId, other);
});

// ---------------------------------------------------------------------------------------------
// maxResourceBookingLimit: per customer and resource, ever, RE not counted.

test('maxResourceBookingLimit: refused on create and hold with that resource, allowed with another resource or customer', async () => {
  const s = await setup(context, { service: { maxResourceBookingLimit: 1 }, resources: [{}, {}] });
  const [r0, r1] = s.resourceIds as [string, string];
  const date = dayAhead();
  const first = await create(s, forCustomer(s.customerId, date, '10:00', r0));
  refused(await request(s, 'create', forCustomer(s.customerId, date, '11:00', r0)), 'BOOKING-113', 'ResourceIds');
  refused(await request(s, 'hold', forCustomer(s.customerId, date, '11:00', r0)), 'BOOKING-113', 'ResourceIds');
  await create(s, forCustomer(s.customerId, date, '11:00', r1));
  await create(s, forCustomer(await newCustomer(s), date, '12:00', r0));
  // CN counts.
  ok(await operate(s, first.id, 'cancel'));
  refused(await request(s, 'create', forCustomer(s.customerId, date, '13:00', r0)), 'BOOKING-113', 'ResourceIds');
});

test('maxResourceBookingLimit: RE does not count; reschedule to a resource at the limit is refused', async () => {
  const s = await setup(context, { service: { maxResourceBookingLimit: 1 }, resources: [{}, {}] });
  const [r0, r1] = s.resourceIds as [string, string];
  const date = dayAhead();
  const onR0 = await create(s, forCustomer(s.customerId, date, '10:00', r0));
  await create(s, forCustomer(s.customerId, date, '11:00', r1));
  // Same resource, new time: allowed (the appointment does not count against itself).
  const moved = ok(await operate(s, onR0.id, 'reschedule', slot(date, '14:00')));
  assert.deepEqual(moved.resourceIds, [r0]);
  // Onto r1, where the customer already has one: refused.
  refused(await operate(s, moved.id, 'reschedule', { ...slot(date, '15:00'), ResourceIds: [r1] }), 'BOOKING-113', 'ResourceIds');
  // The RE original is not counted: only the replacement holds r0's one.
  refused(await request(s, 'create', forCustomer(s.customerId, date, '16:00', r0)), 'BOOKING-113', 'ResourceIds');
  ok(await operate(s, moved.id, 'reschedule', slot(date, '16:00')));
});

test('maxResourceBookingLimit on book and the metadata update', async () => {
  const s = await setup(context, { service: { maxResourceBookingLimit: 1 }, resources: [{}, {}] });
  const [r0, r1] = s.resourceIds as [string, string];
  const date = dayAhead();
  await create(s, forCustomer(s.customerId, date, '10:00', r0));
  const anonymous = await hold(s, { ...slot(date, '11:00'), CustomerId: undefined, ResourceIds: [r0] });
  refused(await operate(s, anonymous.id, 'book', { CustomerId: s.customerId }), 'BOOKING-113', 'ResourceIds');
  const other = await newCustomer(s);
  ok(await operate(s, anonymous.id, 'book', { CustomerId: other }));
  refused(await operate(s, anonymous.id, '', { CustomerId: s.customerId }), 'BOOKING-113', 'ResourceIds');
  const onR1 = await create(s, forCustomer(other, date, '12:00', r1));
  assert.equal(ok(await operate(s, onR1.id, '', { CustomerId: s.customerId })).customerId, s.customerId);
});

// ---------------------------------------------------------------------------------------------
// The resource's own bookingLimit: active appointments per customer with that resource.

test('resource bookingLimit: active appointments with the resource count (BK, unexpired IN), RS, CN and expired IN do not', async () => {
  const s = await setup(context, { resources: [{ bookingLimit: 1 }, {}] });
  const [r0, r1] = s.resourceIds as [string, string];
  const resource = json(await context.app.inject({ method: 'GET', url: `/v3/resource/${r0}`, headers: s.headers }));
  assert.equal(resource.bookingLimit, 1);
  const date = dayAhead();
  const booked = await create(s, forCustomer(s.customerId, date, '10:00', r0));
  refused(await request(s, 'create', forCustomer(s.customerId, date, '11:00', r0)), 'BOOKING-113', 'ResourceIds');
  refused(await request(s, 'hold', forCustomer(s.customerId, date, '11:00', r0)), 'BOOKING-113', 'ResourceIds');
  // The other resource has no limit; another customer is not limited.
  await create(s, forCustomer(s.customerId, date, '11:00', r1));
  await create(s, forCustomer(s.customerId, date, '12:00', r1));
  await create(s, forCustomer(await newCustomer(s), date, '12:00', r0));
  // CN frees it.
  ok(await operate(s, booked.id, 'cancel'));
  const held = await hold(s, forCustomer(s.customerId, date, '13:00', r0));
  refused(await request(s, 'create', forCustomer(s.customerId, date, '14:00', r0)), 'BOOKING-113', 'ResourceIds');
  // An expired IN does not count.
  await expire(s, held.id);
  const again = await hold(s, forCustomer(s.customerId, date, '14:00', r0));
  // RS does not count, and reserve is not refused by it.
  ok(await operate(s, again.id, 'reserve'));
  const besideReservation = await create(s, forCustomer(s.customerId, date, '15:00', r0));
  // Booking the reservation now would make two: refused.
  refused(await operate(s, again.id, 'book', {}), 'BOOKING-113', 'ResourceIds');
  ok(await operate(s, besideReservation.id, 'cancel'));
  ok(await operate(s, again.id, 'book', {}));
});

test('resource bookingLimit on reschedule and the metadata update', async () => {
  const s = await setup(context, { resources: [{ bookingLimit: 1 }, {}] });
  const [r0, r1] = s.resourceIds as [string, string];
  const date = dayAhead();
  const onR0 = await create(s, forCustomer(s.customerId, date, '10:00', r0));
  const onR1 = await create(s, forCustomer(s.customerId, date, '11:00', r1));
  ok(await operate(s, onR0.id, 'reschedule', slot(date, '13:00')));
  refused(await operate(s, onR1.id, 'reschedule', { ...slot(date, '14:00'), ResourceIds: [r0] }), 'BOOKING-113', 'ResourceIds');
  const other = await newCustomer(s);
  const theirs = await create(s, forCustomer(other, date, '15:00', r0));
  refused(await operate(s, theirs.id, '', { CustomerId: s.customerId }), 'BOOKING-113', 'ResourceIds');
  const theirsOnR1 = await create(s, forCustomer(other, date, '16:00', r1));
  ok(await operate(s, theirsOnR1.id, '', { CustomerId: s.customerId }));
});

// ---------------------------------------------------------------------------------------------
// Daily limits of the service: per local day, counting BK, RS and unexpired IN.

test('dailyBookingLimitCount: BK, IN and RS count per day; the next is BOOKING-106 on create, hold and reschedule; CN and expired IN do not count', async () => {
  const s = await setup(context, { service: { dailyBookingLimitCount: 3 } });
  const date = dayAhead();
  const other = dayAhead(15);
  const booked = await create(s, slot(date, '09:00'));
  const held = await hold(s, forCustomer(await newCustomer(s), date, '10:00'));
  const reserved = await hold(s, forCustomer(await newCustomer(s), date, '11:00'));
  ok(await operate(s, reserved.id, 'reserve'));
  refused(await request(s, 'create', slot(date, '12:00')), 'BOOKING-106');
  refused(await request(s, 'hold', slot(date, '12:00')), 'BOOKING-106');
  const elsewhere = await create(s, slot(other, '12:00'));
  refused(await operate(s, elsewhere.id, 'reschedule', slot(date, '12:00')), 'BOOKING-106');
  // Within its own day, a booking can move: it does not count against itself.
  ok(await operate(s, booked.id, 'reschedule', slot(date, '14:00')));
  assert.ok(!(await freeTimes(s, date)).includes('12:00'), 'the day is full in availability too');
  await expire(s, held.id);
  await create(s, slot(date, '12:00'));
  refused(await request(s, 'create', slot(date, '13:00')), 'BOOKING-106');
  ok(await operate(s, reserved.id, 'cancel'));
  await create(s, slot(date, '13:00'));
});

test('dailyBookingLimitMinutes: the day\'s remaining minutes must cover the duration (BOOKING-106)', async () => {
  const s = await setup(context, {
    service: { duration: 60, durationSelect: true, durationMin: 30, durationMax: 60, durationInterval: 30, bookingInterval: 30, dailyBookingLimitMinutes: 150 },
  });
  const date = dayAhead();
  await create(s, slot(date, '09:00'));
  await hold(s, forCustomer(await newCustomer(s), date, '10:00'));
  // 30 minutes left: 60 is refused, 30 fits, then nothing.
  refused(await request(s, 'create', slot(date, '12:00')), 'BOOKING-106');
  refused(await request(s, 'hold', slot(date, '12:00')), 'BOOKING-106');
  await create(s, slot(dayAhead(15), '12:00'));
  const short = await create(s, slot(date, '12:00', 30));
  assert.equal(short.duration, 30);
  refused(await request(s, 'create', slot(date, '13:00', 30)), 'BOOKING-106');
  refused(await operate(s, short.id, 'reschedule', slot(date, '14:00')), 'BOOKING-106');
  ok(await operate(s, short.id, 'reschedule', slot(date, '14:00', 30)));
});

test('booking a hold or a reservation checks the daily limit again: an exhausted day cannot be bypassed', async () => {
  const s = await setup(context, { service: { dailyBookingLimitCount: 2 } });
  const date = dayAhead();
  const second = dayAhead(15);
  const third = dayAhead(16);
  const held = await hold(s, slot(date, '10:00'));
  const reserved = await hold(s, slot(second, '10:00'));
  ok(await operate(s, reserved.id, 'reserve'));
  const toReserve = await hold(s, slot(third, '10:00'));
  // Another booking fills each day to the limit of 2, then the limit is lowered to 1.
  const other = await newCustomer(s);
  const fillers = [];
  for (const day of [date, second, third]) fillers.push(await create(s, forCustomer(other, day, '12:00')));
  await updateService(s, { dailyBookingLimitCount: 1 });
  refused(await operate(s, held.id, 'book', {}), 'BOOKING-106');
  refused(await operate(s, reserved.id, 'book', {}), 'BOOKING-106');
  refused(await operate(s, reserved.id, 'confirm'), 'BOOKING-106');
  refused(await operate(s, toReserve.id, 'reserve', {}), 'BOOKING-106');
  for (const [id, status] of [[held.id, 'IN'], [reserved.id, 'RS'], [toReserve.id, 'IN']]) {
    assert.equal(json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${id}`, headers: s.headers })).status, status);
  }
  // Once the other booking is gone, the hold and the reservation are the day's only one: allowed.
  for (const filler of fillers) ok(await operate(s, filler.id, 'cancel'));
  assert.equal(ok(await operate(s, held.id, 'book', {})).status, 'BK');
  assert.equal(ok(await operate(s, reserved.id, 'book', {})).status, 'BK');
  assert.equal(ok(await operate(s, toReserve.id, 'reserve', {})).status, 'RS');
});

// ---------------------------------------------------------------------------------------------
// Capacity per slot.

test('bookingsPerSlot 2: two appointments share a slot, the third is BOOKING-105', async () => {
  const s = await setup(context, { service: { bookingsPerSlot: 2 } });
  const date = dayAhead();
  const first = await create(s, slot(date, '10:00'));
  assert.ok((await freeTimes(s, date)).includes('10:00'), 'one unit is left');
  const second = await hold(s, forCustomer(await newCustomer(s), date, '10:00'));
  assert.deepEqual(second.resourceIds, first.resourceIds);
  assert.ok(!(await freeTimes(s, date)).includes('10:00'));
  refused(await request(s, 'create', forCustomer(await newCustomer(s), date, '10:00')), 'BOOKING-105');
  refused(await request(s, 'hold', slot(date, '10:00')), 'BOOKING-105');
  const elsewhere = await create(s, slot(date, '14:00'));
  refused(await operate(s, elsewhere.id, 'reschedule', slot(date, '10:00')), 'BOOKING-105');
  // Booking the hold keeps its unit; cancelling the first frees one.
  ok(await operate(s, second.id, 'book', {}));
  ok(await operate(s, first.id, 'cancel'));
  ok(await operate(s, elsewhere.id, 'reschedule', slot(date, '10:00')));
  refused(await request(s, 'create', slot(date, '10:00')), 'BOOKING-105');
});

// ---------------------------------------------------------------------------------------------
// Validation of the requested slot.

test('duration rules: BOOKING-102, 140, 141 and 142, and the durations a durationSelect service allows', async () => {
  const s = await setup(context, { service: { duration: 60, durationSelect: true, durationMin: 30, durationMax: 120, durationInterval: 30, bookingInterval: 30 } });
  const date = dayAhead();
  const ninety = await create(s, slot(date, '10:00', 90));
  assert.equal(ninety.duration, 90);
  const thirty = await hold(s, { ...slot(date, '12:00', 30), duration: 30, overrideDuration: true });
  assert.equal(thirty.duration, 30);
  await create(s, { ...slot(date, '13:00', 120), duration: 120 });
  for (const kind of ['create', 'hold'] as const) {
    refused(await request(s, kind, slot(date, '15:00', 45)), 'BOOKING-142', 'duration');
    refused(await request(s, kind, slot(date, '15:00', 150)), 'BOOKING-141', 'duration');
    refused(await request(s, kind, slot(date, '15:00', 15)), 'BOOKING-141', 'duration');
    refused(await request(s, kind, { ...slot(date, '15:00', 60), duration: 30 }), 'BOOKING-102', 'duration');
  }
  const backwards = slot(date, '15:00');
  refused(await request(s, 'create', { Unavailability: { startTime: backwards.Unavailability.endTime, endTime: backwards.Unavailability.startTime } }), 'BOOKING-102', 'Unavailability.endTime');
  refused(await request(s, 'create', { Unavailability: { startTime: backwards.Unavailability.startTime, endTime: backwards.Unavailability.startTime } }), 'BOOKING-102', 'Unavailability.endTime');
  refused(await operate(s, ninety.id, 'reschedule', slot(date, '15:00', 45)), 'BOOKING-142', 'duration');
  refused(await operate(s, ninety.id, 'reschedule', slot(date, '15:00', 180)), 'BOOKING-141', 'duration');
  assert.equal(ok(await operate(s, ninety.id, 'reschedule', slot(date, '15:00', 60))).duration, 60);

  // Without durationSelect only the service's duration is allowed, overrideDuration or not.
  const fixed = await setup(context);
  refused(await request(fixed, 'create', slot(date, '10:00', 30)), 'BOOKING-140', 'duration');
  refused(await request(fixed, 'hold', { ...slot(date, '10:00', 90), overrideDuration: true }), 'BOOKING-140', 'duration');
  const booked = await create(fixed, { ...slot(date, '10:00'), duration: 60 });
  refused(await operate(fixed, booked.id, 'reschedule', slot(date, '12:00', 120)), 'BOOKING-140', 'duration');
});

test('lead time: start in the past is BOOKING-103, inside bookInAdvance BOOKING-104, on create, hold and reschedule', async () => {
  const s = await setup(context, { service: { bookInAdvance: 7 * 24 * 60 } });
  const soon = dayAhead(3);
  const past = dayAhead(-2);
  for (const kind of ['create', 'hold'] as const) {
    refused(await request(s, kind, slot(past, '10:00')), 'BOOKING-103', 'Unavailability.startTime');
    refused(await request(s, kind, slot(soon, '10:00')), 'BOOKING-104', 'Unavailability.startTime');
  }
  const booked = await create(s, slot(dayAhead(), '10:00'));
  const held = await hold(s, slot(dayAhead(), '11:00'));
  refused(await operate(s, booked.id, 'reschedule', slot(soon, '10:00')), 'BOOKING-104', 'Unavailability.startTime');
  refused(await operate(s, booked.id, 'reschedule', slot(past, '10:00')), 'BOOKING-103', 'Unavailability.startTime');
  ok(await operate(s, booked.id, 'reschedule', slot(dayAhead(9), '10:00')));

  const stale = await hold(s, slot(dayAhead(16), '12:00'));
  // Lead time is not checked again when a hold is booked...
  await updateService(s, { bookInAdvance: 10_080, bookAheadUnit: 'days', bookAheadValue: 2 });
  assert.equal(ok(await operate(s, held.id, 'book', {})).status, 'BK');
  // ...but a start that is now in the past is.
  const start = new Date(Date.now() - 2 * 3_600_000);
  const end = new Date(start.getTime() + 3_600_000);
  const db = context.database.db;
  await db.updateTable('appointments').set({ startTime: start, endTime: end }).where('companyId', '=', s.tenant.companyId).where('id', '=', stale.id).execute();
  await db.updateTable('appointmentResources').set({ startTime: start, endTime: end }).where('companyId', '=', s.tenant.companyId).where('appointmentId', '=', stale.id).execute();
  refused(await operate(s, stale.id, 'book', {}), 'BOOKING-103');
});

test('book-ahead: a start beyond bookAheadValue days is BOOKING-100 on create, hold and reschedule', async () => {
  const s = await setup(context, { service: { bookAheadUnit: 'days', bookAheadValue: 30 } });
  const far = dayAhead(90);
  for (const kind of ['create', 'hold'] as const) {
    refused(await request(s, kind, slot(far, '10:00')), 'BOOKING-100', 'Unavailability.startTime');
  }
  const booked = await create(s, slot(dayAhead(), '10:00'));
  await hold(s, slot(dayAhead(25), '10:00'));
  refused(await operate(s, booked.id, 'reschedule', slot(far, '10:00')), 'BOOKING-100', 'Unavailability.startTime');
  ok(await operate(s, booked.id, 'reschedule', slot(dayAhead(20), '10:00')));
});

test('ids of another company or unknown ids are 400 naming the value: LocationId, ServiceId, each ResourceIds entry, CustomerId', async () => {
  const s = await setup(context);
  const other = await setup(context);
  const date = dayAhead();
  const expectNamed = (response: LightMyRequestResponse, location: string, paths: string[], ids: string[]) => {
    const body = assertBadRequest(response);
    assert.deepEqual(body.errors.map((e) => e.path), paths, response.body);
    body.errors.forEach((error, index) => {
      assert.equal(error.location, location);
      assert.ok(error.msg.includes(ids[index]!), `${error.msg} names ${ids[index]}`);
      assert.ok(body.message.includes(ids[index]!), `${body.message} names ${ids[index]}`);
    });
  };
  const withQuery = (kind: 'create' | 'hold', locationId: string, serviceId: string, body: Record<string, unknown>) =>
    context.app.inject({
      method: 'POST',
      url: `/v3/appointment${kind === 'hold' ? '/hold' : ''}?LocationId=${locationId}&ServiceId=${serviceId}`,
      headers: s.headers,
      payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(date, '10:00'), ...body },
    });
  for (const kind of ['create', 'hold'] as const) {
    for (const foreign of [other, null]) {
      const locationId = foreign ? foreign.locationId : randomUUID();
      const serviceId = foreign ? foreign.serviceId : randomUUID();
      const resourceId = foreign ? foreign.resourceIds[0]! : randomUUID();
      const customerId = foreign ? foreign.customerId : randomUUID();
      expectNamed(await withQuery(kind, locationId, s.serviceId, {}), 'query', ['LocationId'], [locationId]);
      expectNamed(await withQuery(kind, s.locationId, serviceId, {}), 'query', ['ServiceId'], [serviceId]);
      expectNamed(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: [resourceId] }), 'body', ['ResourceIds.0'], [resourceId]);
      expectNamed(await request(s, kind, { ...slot(date, '10:00'), CustomerId: customerId }), 'body', ['CustomerId'], [customerId]);
    }
    // Several bad entries: each is named at its index.
    const foreignResource = other.resourceIds[0]!;
    const unknownResource = randomUUID();
    const several = assertBadRequest(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: [s.resourceIds[0], foreignResource, unknownResource] }));
    assert.deepEqual(several.errors.map((e) => e.path), ['ResourceIds.1', 'ResourceIds.2']);
    assert.ok(several.message.includes(foreignResource) && several.message.includes(unknownResource), several.message);
  }

  // On reschedule (ResourceIds), book and the metadata update (CustomerId).
  const booked = await create(s, slot(date, '10:00'));
  const foreignResource = other.resourceIds[0]!;
  expectNamed(await operate(s, booked.id, 'reschedule', { ...slot(date, '12:00'), ResourceIds: [foreignResource] }), 'body', ['ResourceIds.0'], [foreignResource]);
  const anonymous = await hold(s, { ...slot(date, '11:00'), CustomerId: undefined });
  for (const customerId of [other.customerId, randomUUID()]) {
    expectNamed(await operate(s, anonymous.id, 'book', { CustomerId: customerId }), 'body', ['CustomerId'], [customerId]);
    expectNamed(await operate(s, booked.id, '', { CustomerId: customerId }), 'body', ['CustomerId'], [customerId]);
  }
  // Nothing was written in the other company, and the checked appointments are unchanged.
  const theirs = json(await context.app.inject({ method: 'GET', url: '/v3/appointments', headers: other.headers }));
  assert.equal(theirs.total, 0);
  assert.equal(json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${anonymous.id}`, headers: s.headers })).customerId, null);
});

test('a resource not linked to the location and service is 400 at its ResourceIds index; a service not offered at the location is 400 ServiceId', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const unlinked = await s.tenant.resource({ name: 'Elsewhere' });
  const otherService = await s.tenant.service({ name: 'Not here' });
  // Linked to the location but not to the service.
  const wrongService = await s.tenant.resource({ name: 'Wrong service', locationIds: [s.locationId], serviceIds: [otherService] });
  for (const kind of ['create', 'hold'] as const) {
    refused(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: [unlinked] }), undefined, 'ResourceIds.0');
    refused(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: [s.resourceIds[0], wrongService] }), undefined, 'ResourceIds.1');
  }
  const booked = await create(s, slot(date, '10:00'));
  refused(await operate(s, booked.id, 'reschedule', { ...slot(date, '12:00'), ResourceIds: [unlinked] }), undefined, 'ResourceIds.0');
  const notOffered = await context.app.inject({
    method: 'POST',
    url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${otherService}`,
    headers: s.headers,
    payload: { ...slot(date, '11:00'), ResourceIds: [wrongService], CustomerId: s.customerId },
  });
  const body = assertBadRequest(notOffered);
  assert.equal(body.errors[0]?.path, 'ServiceId');
  assert.equal(body.errors[0]?.location, 'query');
});

test('round robin NONE needs ResourceIds (BOOKING-407)', async () => {
  const s = await setup(context);
  const date = dayAhead();
  for (const kind of ['create', 'hold'] as const) {
    refused(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: undefined }), 'BOOKING-407', 'ResourceIds');
    refused(await request(s, kind, { ...slot(date, '10:00'), ResourceIds: [] }), 'BOOKING-407', 'ResourceIds');
  }
  const booked = await create(s, slot(date, '10:00'));
  assert.deepEqual(booked.resourceIds, [s.resourceIds[0]]);
});

test('the customer of a new booking: none is BOOKING-135; name without email 109, email without name 110; name and email find or create it once', async () => {
  const s = await setup(context);
  const date = dayAhead();
  refused(await request(s, 'create', { ...slot(date, '10:00'), CustomerId: undefined }), 'BOOKING-135');
  refused(await request(s, 'create', { ...slot(date, '10:00'), CustomerId: undefined, name: 'Mary Shelley' }), 'BOOKING-109');
  refused(await request(s, 'create', { ...slot(date, '10:00'), CustomerId: undefined, email: `nameless-${randomUUID()}@example.com` }), 'BOOKING-110');

  const email = `Mary.Shelley-${randomUUID()}@Example.com`;
  const first = await create(s, { ...slot(date, '10:00'), CustomerId: undefined, name: 'Mary Shelley', email });
  assert.ok(first.customerId);
  assert.notEqual(first.customerId, s.customerId);
  const second = await create(s, { ...slot(date, '11:00'), CustomerId: undefined, name: 'M. Shelley', email: email.toLowerCase() });
  assert.equal(second.customerId, first.customerId);
  const held = await hold(s, { ...slot(date, '12:00'), CustomerId: undefined, name: 'Mary', email: email.toUpperCase() });
  assert.equal(held.customerId, first.customerId);
  for (const query of [email, email.toLowerCase()]) {
    const found = json(await context.app.inject({ method: 'GET', url: `/v3/customers?email=${encodeURIComponent(query)}`, headers: s.headers }));
    assert.equal(found.total, 1, JSON.stringify(found));
    assert.equal(found.data[0].id, first.customerId);
    assert.equal(found.data[0].firstName, 'Mary');
    assert.equal(found.data[0].lastName, 'Shelley');
  }
  // An existing customer's email, in another case, is that customer.
  const existing = json(await context.app.inject({ method: 'GET', url: `/v3/customer/${s.customerId}`, headers: s.headers }));
  const reused = await create(s, { ...slot(date, '13:00'), CustomerId: undefined, name: 'Ada', email: String(existing.email).toUpperCase() });
  assert.equal(reused.customerId, s.customerId);
  const all = json(await context.app.inject({ method: 'GET', url: '/v3/customers', headers: s.headers }));
  assert.equal(all.total, 2);
});

test('a start off the booking grid or outside the hours was never open (not BOOKING-105); on the grid is allowed', async () => {
  const s = await setup(context);
  const date = dayAhead();
  for (const kind of ['create', 'hold'] as const) {
    for (const time of ['10:30', '09:15', '16:30', '17:00', '08:00']) {
      const body = assertNotOpen(await request(s, kind, slot(date, time)));
      assert.deepEqual(body.errors.map((e) => e.path), ['Unavailability.startTime']);
    }
  }
  const booked = await create(s, slot(date, '10:00'));
  assertNotOpen(await operate(s, booked.id, 'reschedule', slot(date, '11:30')));
  ok(await operate(s, booked.id, 'reschedule', slot(date, '16:00')));
});
