// The States and transitions table of the appointment API, row by row: every operation on the
// statuses it accepts (with its events) and on the ones it refuses (with the refusal's code), the
// 404 of unknown and other companies' appointments, and holds that give their slot back on expiry
// without any job.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, assertNotOpen, create, dayAhead, events, freeTimes, hold, operate, request, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

function getAppointment(s: Setup, id: string, headers: Record<string, string> = s.headers) {
  return s.context.app.inject({ method: 'GET', url: `/v3/appointment/${id}`, headers });
}

function deleteAppointment(s: Setup, id: string, headers: Record<string, string> = s.headers) {
  return s.context.app.inject({ method: 'DELETE', url: `/v3/appointment/${id}`, headers });
}

/** The appointment of a 200 answer. */
function ok(response: LightMyRequestResponse): Appointment {
  assert.equal(response.statusCode, 200, response.body);
  return json<Appointment>(response);
}

async function read(s: Setup, id: string): Promise<Appointment> {
  return ok(await getAppointment(s, id));
}

/** Makes a hold expire now, as time passing would: both the appointment and its resource rows. */
async function expire(s: Setup, id: string): Promise<void> {
  const past = new Date(Date.now() - 60_000);
  const db = s.context.database.db;
  await db.updateTable('appointments').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('id', '=', id).execute();
  await db.updateTable('appointmentResources').set({ expiresAt: past }).where('companyId', '=', s.tenant.companyId).where('appointmentId', '=', id).execute();
}

/** One appointment in each status: IN, RS, BK, CN and RE (with its replacement BK), on `date`. */
async function everyStatus(s: Setup, date: string) {
  const held = await hold(s, slot(date, '09:00'));
  const reserved = await hold(s, slot(date, '10:00'));
  ok(await operate(s, reserved.id, 'reserve'));
  const booked = await create(s, slot(date, '11:00'));
  const cancelled = await create(s, slot(date, '12:00'));
  ok(await operate(s, cancelled.id, 'cancel'));
  const rescheduled = await create(s, slot(date, '13:00'));
  const replacement = ok(await operate(s, rescheduled.id, 'reschedule', slot(date, '14:00')));
  return { IN: held.id, RS: reserved.id, BK: booked.id, CN: cancelled.id, RE: rescheduled.id, replacement: replacement.id };
}

test('hold: a free slot becomes IN with an expiry and no event; a taken slot is BOOKING-105', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const before = Date.now();
  const held = await hold(s, slot(date, '10:00'));
  assert.equal(held.status, 'IN');
  assert.equal(held.customerId, s.customerId);
  assert.deepEqual(held.resourceIds, [s.resourceIds[0]]);
  assert.ok(held.expiresAt);
  const expiresIn = Date.parse(held.expiresAt) - before;
  assert.ok(expiresIn > 9 * 60_000 && expiresIn <= 11 * 60_000, `expiresAt ${held.expiresAt} is not about 10 minutes ahead`);
  assert.equal(held.confirmed, false);
  assert.deepEqual(await events(s, held.id), []);
  assert.ok(!(await freeTimes(s, date)).includes('10:00'));

  // Taken by the hold: neither another hold nor a booking gets it.
  assertBadRequest(await request(s, 'hold', slot(date, '10:00')), 'BOOKING-105');
  assertBadRequest(await request(s, 'create', slot(date, '10:00')), 'BOOKING-105');
  // Taken by a booking.
  await create(s, slot(date, '11:00'));
  assertBadRequest(await request(s, 'hold', slot(date, '11:00')), 'BOOKING-105');
  // A hold may have no customer yet.
  const anonymous = await hold(s, { ...slot(date, '12:00'), CustomerId: undefined });
  assert.equal(anonymous.customerId, null);
});

test('hold with a COMBINED service: every requested resource must be free, and the hold takes them all', async () => {
  const s = await setup(context, { service: { roundRobin: 'COMBINED' }, resources: [{}, {}] });
  const date = dayAhead();
  const both = [...s.resourceIds].sort();
  const combined = await hold(s, { ...slot(date, '10:00'), ResourceIds: s.resourceIds });
  assert.equal(combined.status, 'IN');
  assert.deepEqual([...combined.resourceIds].sort(), both);
  // Without ResourceIds: every bookable resource.
  const all = await hold(s, { ...slot(date, '11:00'), ResourceIds: undefined });
  assert.deepEqual([...all.resourceIds].sort(), both);

  // The second resource alone is busy at 12:00: a hold needing both is refused, one of the first alone is not.
  await create(s, { ...slot(date, '12:00'), ResourceIds: [s.resourceIds[1]] });
  assertBadRequest(await request(s, 'hold', { ...slot(date, '12:00'), ResourceIds: s.resourceIds }), 'BOOKING-105');
  assertBadRequest(await request(s, 'hold', { ...slot(date, '12:00'), ResourceIds: undefined }), 'BOOKING-105');
  const first = await hold(s, { ...slot(date, '12:00'), ResourceIds: [s.resourceIds[0]] });
  assert.deepEqual(first.resourceIds, [s.resourceIds[0]]);
});

test('reserve: IN becomes RS without expiry or event; RS, BK, CN and RE are BOOKING-117; an expired IN is BOOKING-111', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const held = await hold(s, slot(date, '15:00'));
  const reserved = ok(await operate(s, held.id, 'reserve'));
  assert.equal(reserved.status, 'RS');
  assert.equal(reserved.expiresAt, null);
  assert.equal(reserved.confirmed, false);
  assert.deepEqual(await events(s, held.id), []);
  // Still holds its slot, with no expiry.
  assert.ok(!(await freeTimes(s, date)).includes('15:00'));
  assertBadRequest(await request(s, 'create', slot(date, '15:00')), 'BOOKING-105');

  const ids = await everyStatus(s, date);
  for (const status of ['RS', 'BK', 'CN', 'RE'] as const) {
    assertBadRequest(await operate(s, ids[status], 'reserve', {}), 'BOOKING-117');
    assert.equal((await read(s, ids[status])).status, status);
  }

  const stale = await hold(s, slot(date, '16:00'));
  await expire(s, stale.id);
  assertBadRequest(await operate(s, stale.id, 'reserve', {}), 'BOOKING-111');
  assert.equal((await read(s, stale.id)).status, 'IN');
});

test('allowPaddingOverflow and ignoreExternalEvents chosen at hold or at reserve are kept after book', async () => {
  // 30 minutes of padding: the 16:00 slot's padding runs past 17:00, so it needs allowPaddingOverflow.
  const s = await setup(context, { service: { padding: 30 } });
  const date = dayAhead();
  assertNotOpen(await request(s, 'hold', slot(date, '16:00')));

  // Chosen at hold.
  const atHold = await hold(s, { ...slot(date, '16:00'), allowPaddingOverflow: true, ignoreExternalEvents: true });
  assert.equal(atHold.allowPaddingOverflow, true);
  assert.equal(atHold.ignoreExternalEvents, true);
  const bookedHold = ok(await operate(s, atHold.id, 'book', {}));
  assert.equal(bookedHold.status, 'BK');
  assert.equal(bookedHold.allowPaddingOverflow, true);
  assert.equal(bookedHold.ignoreExternalEvents, true);

  // Chosen at hold, kept through a reserve that does not name them, then book.
  const other = dayAhead(15);
  const keptThroughReserve = await hold(s, { ...slot(other, '16:00'), allowPaddingOverflow: true });
  const reservedKept = ok(await operate(s, keptThroughReserve.id, 'reserve', {}));
  assert.equal(reservedKept.allowPaddingOverflow, true);
  const bookedKept = ok(await operate(s, keptThroughReserve.id, 'book', {}));
  assert.equal(bookedKept.allowPaddingOverflow, true);
  assert.equal(bookedKept.ignoreExternalEvents, false);

  // Chosen at reserve.
  const atReserve = await hold(s, slot(dayAhead(16), '10:00'));
  assert.equal(atReserve.allowPaddingOverflow, false);
  assert.equal(atReserve.ignoreExternalEvents, false);
  const reserved = ok(await operate(s, atReserve.id, 'reserve', { allowPaddingOverflow: true, ignoreExternalEvents: true }));
  assert.equal(reserved.allowPaddingOverflow, true);
  assert.equal(reserved.ignoreExternalEvents, true);
  const booked = ok(await operate(s, atReserve.id, 'book', {}));
  assert.equal(booked.status, 'BK');
  assert.equal(booked.allowPaddingOverflow, true);
  assert.equal(booked.ignoreExternalEvents, true);
  assert.deepEqual((await read(s, atReserve.id)).allowPaddingOverflow, true);
});

test('book: IN becomes BK with NEW_APPOINTMENT; RS becomes BK, confirmed, with NEW_APPOINTMENT and APPOINTMENT_CONFIRMED', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const held = await hold(s, slot(date, '10:00'));
  const booked = ok(await operate(s, held.id, 'book', {}));
  assert.equal(booked.status, 'BK');
  assert.equal(booked.expiresAt, null);
  assert.equal(booked.confirmed, false);
  assert.equal(booked.customerId, s.customerId);
  assert.deepEqual(await events(s, held.id), ['NEW_APPOINTMENT']);

  const reservedHold = await hold(s, slot(date, '11:00'));
  ok(await operate(s, reservedHold.id, 'reserve', {}));
  const fromReserved = ok(await operate(s, reservedHold.id, 'book', {}));
  assert.equal(fromReserved.status, 'BK');
  assert.equal(fromReserved.confirmed, true);
  assert.equal(fromReserved.expiresAt, null);
  // Both written in one transaction: compared as a set.
  assert.deepEqual((await events(s, reservedHold.id)).sort(), ['APPOINTMENT_CONFIRMED', 'NEW_APPOINTMENT']);
  assert.ok(!(await freeTimes(s, date)).includes('10:00'));
  assert.ok(!(await freeTimes(s, date)).includes('11:00'));
});

test('book: a hold without a customer needs CustomerId or name and email (BOOKING-135), then gets that customer', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const anonymous = await hold(s, { ...slot(date, '10:00'), CustomerId: undefined });
  assertBadRequest(await operate(s, anonymous.id, 'book', {}), 'BOOKING-135');
  assert.equal((await read(s, anonymous.id)).status, 'IN');
  const booked = ok(await operate(s, anonymous.id, 'book', { CustomerId: s.customerId }));
  assert.equal(booked.status, 'BK');
  assert.equal(booked.customerId, s.customerId);

  const byDetails = await hold(s, { ...slot(date, '11:00'), CustomerId: undefined });
  const email = `walk-in-${randomUUID()}@example.com`;
  const bookedByDetails = ok(await operate(s, byDetails.id, 'book', { name: 'Walk In', email }));
  assert.ok(bookedByDetails.customerId);
  assert.notEqual(bookedByDetails.customerId, s.customerId);
});

test('book: BK, CN and RE are BOOKING-108; an expired IN is BOOKING-111', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const ids = await everyStatus(s, date);
  for (const status of ['BK', 'CN', 'RE'] as const) {
    assertBadRequest(await operate(s, ids[status], 'book', {}), 'BOOKING-108');
    assert.equal((await read(s, ids[status])).status, status);
  }
  const stale = await hold(s, slot(date, '16:00'));
  await expire(s, stale.id);
  assertBadRequest(await operate(s, stale.id, 'book', {}), 'BOOKING-111');
  assert.equal((await read(s, stale.id)).status, 'IN');
  assert.deepEqual(await events(s, stale.id), []);
});

test('confirm: BK gets confirmed and APPOINTMENT_CONFIRMED once; RS is booked and confirmed; IN, CN and RE are BOOKING-406', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const booked = await create(s, slot(date, '15:00'));
  assert.equal(booked.confirmed, false);
  const confirmed = ok(await operate(s, booked.id, 'confirm'));
  assert.equal(confirmed.status, 'BK');
  assert.equal(confirmed.confirmed, true);
  assert.deepEqual(await events(s, booked.id), ['NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED']);
  const again = ok(await operate(s, booked.id, 'confirm'));
  assert.equal(again.confirmed, true);
  assert.deepEqual(await events(s, booked.id), ['NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED']);

  const ids = await everyStatus(s, date);
  const fromReserved = ok(await operate(s, ids.RS, 'confirm'));
  assert.equal(fromReserved.status, 'BK');
  assert.equal(fromReserved.confirmed, true);
  assert.deepEqual((await events(s, ids.RS)).sort(), ['APPOINTMENT_CONFIRMED', 'NEW_APPOINTMENT']);

  for (const status of ['IN', 'CN', 'RE'] as const) {
    assertBadRequest(await operate(s, ids[status], 'confirm'), 'BOOKING-406');
    const after = await read(s, ids[status]);
    assert.equal(after.status, status);
    assert.equal(after.confirmed, false);
  }
  assert.deepEqual(await events(s, ids.IN), []);
});

test('cancel: BK and RS become CN with APPOINTMENT_CANCELLED and the slot is free again; IN, CN and RE are BOOKING-125', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const booked = await create(s, slot(date, '15:00'));
  const reservedHold = await hold(s, slot(date, '16:00'));
  ok(await operate(s, reservedHold.id, 'reserve'));
  const busy = await freeTimes(s, date);
  assert.ok(!busy.includes('15:00') && !busy.includes('16:00'));

  const cancelled = ok(await operate(s, booked.id, 'cancel'));
  assert.equal(cancelled.status, 'CN');
  assert.deepEqual(await events(s, booked.id), ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED']);
  const cancelledReservation = ok(await operate(s, reservedHold.id, 'cancel'));
  assert.equal(cancelledReservation.status, 'CN');
  assert.equal(cancelledReservation.expiresAt, null);
  assert.deepEqual(await events(s, reservedHold.id), ['APPOINTMENT_CANCELLED']);
  const free = await freeTimes(s, date);
  assert.ok(free.includes('15:00') && free.includes('16:00'), free.join(' '));
  // And bookable again.
  await create(s, slot(date, '15:00'));

  const ids = await everyStatus(s, dayAhead(15));
  for (const status of ['IN', 'CN', 'RE'] as const) {
    assertBadRequest(await operate(s, ids[status], 'cancel'), 'BOOKING-125');
    assert.equal((await read(s, ids[status])).status, status);
  }
  assert.deepEqual(await events(s, ids.CN), ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED']);
});

test('reschedule: BK becomes RE with a new BK linked both ways, with APPOINTMENT_RESCHEDULED and NEW_APPOINTMENT', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const booked = await create(s, { ...slot(date, '10:00'), notes: 'bring the file', field1: 'one' });
  const response = await operate(s, booked.id, 'reschedule', slot(date, '14:00'));
  const replacement = ok(response);
  assert.notEqual(replacement.id, booked.id);
  assert.equal(replacement.status, 'BK');
  assert.equal(replacement.rescheduledFromId, booked.id);
  assert.equal(replacement.rescheduledToId, null);
  assert.equal(replacement.startTime, new Date(slot(date, '14:00').Unavailability.startTime).toISOString());
  assert.deepEqual(replacement.resourceIds, booked.resourceIds);
  assert.equal(replacement.customerId, s.customerId);
  assert.equal(replacement.notes, 'bring the file');
  assert.equal(replacement.field1, 'one');
  const original = await read(s, booked.id);
  assert.equal(original.status, 'RE');
  assert.equal(original.rescheduledToId, replacement.id);
  assert.deepEqual(await events(s, booked.id), ['NEW_APPOINTMENT', 'APPOINTMENT_RESCHEDULED']);
  assert.deepEqual(await events(s, replacement.id), ['NEW_APPOINTMENT']);
  const free = await freeTimes(s, date);
  assert.ok(free.includes('10:00'), 'the old slot is free again');
  assert.ok(!free.includes('14:00'));

  // Into a slot overlapping its own: the appointment does not compete with itself.
  const same = ok(await operate(s, replacement.id, 'reschedule', slot(date, '14:00')));
  assert.equal(same.rescheduledFromId, replacement.id);
  assert.equal((await read(s, replacement.id)).status, 'RE');
});

test('reschedule: IN, RS, CN and RE are BOOKING-126; no Unavailability is BOOKING-139; a taken slot is BOOKING-105 and the original stays BK', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const ids = await everyStatus(s, date);
  const target = slot(dayAhead(15), '10:00');
  for (const status of ['IN', 'RS', 'CN', 'RE'] as const) {
    assertBadRequest(await operate(s, ids[status], 'reschedule', target), 'BOOKING-126');
    assert.equal((await read(s, ids[status])).status, status);
  }

  const missing = assertBadRequest(await operate(s, ids.BK, 'reschedule', {}), 'BOOKING-139');
  assert.equal(missing.errors[0]?.path, 'Unavailability');

  // 14:00 is the replacement's (everyStatus rescheduled 13:00 to 14:00); 09:00 is the hold's.
  for (const taken of ['14:00', '09:00', '10:00']) {
    assertBadRequest(await operate(s, ids.BK, 'reschedule', slot(date, taken)), 'BOOKING-105');
  }
  const original = await read(s, ids.BK);
  assert.equal(original.status, 'BK');
  assert.equal(original.rescheduledToId, null);
  assert.deepEqual(await events(s, ids.BK), ['NEW_APPOINTMENT']);
  const list = json(await context.app.inject({ method: 'GET', url: `/v3/appointments?LocationId=${s.locationId}&status=BK`, headers: s.headers }));
  assert.equal(list.total, 2, 'no replacement was written');
});

test('delete: IN is deleted (204) and its slot is free; BK, RS, CN and RE are BOOKING-132', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const held = await hold(s, slot(date, '15:00'));
  assert.ok(!(await freeTimes(s, date)).includes('15:00'));
  const deleted = await deleteAppointment(s, held.id);
  assert.equal(deleted.statusCode, 204, deleted.body);
  assert.equal((await getAppointment(s, held.id)).statusCode, 404);
  assert.ok((await freeTimes(s, date)).includes('15:00'));
  await create(s, slot(date, '15:00'));

  // An expired hold can still be deleted.
  const stale = await hold(s, slot(date, '16:00'));
  await expire(s, stale.id);
  assert.equal((await deleteAppointment(s, stale.id)).statusCode, 204);

  const ids = await everyStatus(s, dayAhead(15));
  for (const status of ['BK', 'RS', 'CN', 'RE'] as const) {
    assertBadRequest(await deleteAppointment(s, ids[status]), 'BOOKING-132');
    assert.equal((await read(s, ids[status])).status, status);
  }
});

test('metadata update: notes and custom fields are saved, by PUT and by PATCH, in any status', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const ids = await everyStatus(s, date);
  for (const status of ['IN', 'RS', 'BK', 'CN', 'RE'] as const) {
    const updated = ok(await operate(s, ids[status], '', { notes: `note for ${status}`, field1: 'first', field10: 'tenth' }));
    assert.equal(updated.status, status);
    assert.equal(updated.notes, `note for ${status}`);
    assert.equal(updated.field1, 'first');
    assert.equal(updated.field10, 'tenth');
    const stored = await read(s, ids[status]);
    assert.equal(stored.notes, `note for ${status}`);
    assert.equal(stored.field10, 'tenth');
  }
  const patched = ok(await context.app.inject({ method: 'PATCH', url: `/v3/appointment/${ids.BK}`, headers: s.headers, payload: { field2: 'second' } }));
  assert.equal(patched.field2, 'second');
  assert.equal(patched.field1, 'first', 'fields not given stay');
  assert.equal(patched.notes, 'note for BK');
  const cleared = ok(await operate(s, ids.BK, '', { notes: null }));
  assert.equal(cleared.notes, null);
  assert.equal((await read(s, ids.BK)).notes, null);
});

test('GET of an unknown appointment is 404', async () => {
  const s = await setup(context);
  const response = await getAppointment(s, randomUUID());
  assert.equal(response.statusCode, 404, response.body);
  assert.equal(json(response).success, false);
  for (const operation of ['reserve', 'book', 'confirm', 'cancel', '']) {
    assert.equal((await operate(s, randomUUID(), operation, {})).statusCode, 404, operation);
  }
  assert.equal((await operate(s, randomUUID(), 'reschedule', slot(dayAhead(), '10:00'))).statusCode, 404);
  assert.equal((await deleteAppointment(s, randomUUID())).statusCode, 404);
});

test('another company\'s appointment is 404 on GET, on every PUT, on PATCH and on DELETE, and stays unchanged', async () => {
  const mine = await setup(context);
  const theirs = await setup(context);
  const date = dayAhead();
  const theirHold = await hold(theirs, slot(date, '10:00'));
  const theirBooking = await create(theirs, slot(date, '11:00'));
  const foreign = mine.headers;
  const notFound = (response: LightMyRequestResponse, what: string) => {
    assert.equal(response.statusCode, 404, `${what}: ${response.body}`);
    assert.equal(json(response).success, false);
  };
  for (const appointment of [theirHold, theirBooking]) {
    notFound(await getAppointment(theirs, appointment.id, foreign), 'GET');
    notFound(await operate(theirs, appointment.id, 'reserve', {}, foreign), 'reserve');
    notFound(await operate(theirs, appointment.id, 'book', {}, foreign), 'book');
    notFound(await operate(theirs, appointment.id, 'confirm', undefined, foreign), 'confirm');
    notFound(await operate(theirs, appointment.id, 'cancel', undefined, foreign), 'cancel');
    notFound(await operate(theirs, appointment.id, 'reschedule', slot(date, '15:00'), foreign), 'reschedule');
    notFound(await operate(theirs, appointment.id, '', { notes: 'not mine' }, foreign), 'PUT metadata');
    notFound(await context.app.inject({ method: 'PATCH', url: `/v3/appointment/${appointment.id}`, headers: foreign, payload: { notes: 'not mine' } }), 'PATCH metadata');
    notFound(await deleteAppointment(theirs, appointment.id, foreign), 'DELETE');
  }
  const hold1 = await read(theirs, theirHold.id);
  assert.equal(hold1.status, 'IN');
  assert.equal(hold1.notes, null);
  const booking = await read(theirs, theirBooking.id);
  assert.equal(booking.status, 'BK');
  assert.equal(booking.confirmed, false);
  assert.equal(booking.rescheduledToId, null);
  assert.equal(booking.notes, null);
  assert.deepEqual(await events(theirs, theirBooking.id), ['NEW_APPOINTMENT']);
  assert.ok((await freeTimes(theirs, date)).includes('15:00'));
});

test('an expired hold gives its capacity back without any job: the same slot can be booked again', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const held = await hold(s, slot(date, '10:00'));
  assertBadRequest(await request(s, 'create', slot(date, '10:00')), 'BOOKING-105');
  assert.ok(!(await freeTimes(s, date)).includes('10:00'));
  await expire(s, held.id);
  // Same customer, so the expired hold must not count against any limit either.
  const booked = await create(s, slot(date, '10:00'));
  assert.equal(booked.status, 'BK');
  assert.deepEqual(booked.resourceIds, held.resourceIds);
  // The expired hold is still there, as IN, but can no longer be booked.
  assert.equal((await read(s, held.id)).status, 'IN');
  assertBadRequest(await operate(s, held.id, 'book', {}), 'BOOKING-111');

  // A new hold works the same way.
  const second = await hold(s, slot(date, '11:00'));
  await expire(s, second.id);
  assert.ok((await freeTimes(s, date)).includes('11:00'));
  const reheld = await hold(s, slot(date, '11:00'));
  assert.equal(reheld.status, 'IN');
});

// A new appointment's answer is built in the application and its insert returns only the id
// (issue 18): what create, hold and reschedule answer must be what is stored, field by field.
test('the answers of create, hold and reschedule are the appointment as a later GET reads it', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const extra = { notes: 'bring the file', field1: 'one', field10: 'ten', legacyId: 'v1-42', allowPaddingOverflow: true, ignoreExternalEvents: true };
  const created = await create(s, { ...slot(date, '10:00'), ...extra });
  assert.deepEqual(ok(await getAppointment(s, created.id)), created, 'create');
  const held = await hold(s, { ...slot(date, '11:00'), notes: 'held' });
  assert.deepEqual(ok(await getAppointment(s, held.id)), held, 'hold');
  const replacement = ok(await operate(s, created.id, 'reschedule', { ...slot(date, '14:00'), field2: 'two' }));
  assert.deepEqual(ok(await getAppointment(s, replacement.id)), replacement, 'reschedule');
});
