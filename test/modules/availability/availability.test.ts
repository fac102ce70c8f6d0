// GET /v3/availability end to end: open windows from the intersected weekly schedules, everything
// that removes time (blocks, recurring blocks, holidays, appointments and their padding), capacity,
// daily and per-customer limits, round robin, duration options, allocations, the 400 cases, location
// scope and daylight-saving days. Appointment routes come later, so appointments, blocks, recurring
// blocks, holidays and allocations are written straight into the database.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY, LONDON, NINE_TO_FIVE } from '../../helpers/world.js';
import type { AppointmentStatus } from '../../../src/platform/database/schema.js';
import { insertAppointment, insertBlock } from '../../helpers/rows.js';
import { setup } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

interface Slot {
  startTime: string;
  endTime: string;
  resourceIds: string[];
  remaining: number;
}
interface Day {
  date: string;
  available: boolean;
  reason: string | null;
}
interface Availability {
  timezoneName: string;
  availableTimes: Slot[];
  availableDays: Day[];
}
interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}

const NEW_YORK = 'America/New_York';
const HOURS = ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00'];

/** A Wednesday at least two weeks after the location's local today, so every test day is ahead. */
function wednesday(zone = LONDON, weeksAhead = 2): string {
  const today = DateTime.now().setZone(zone).startOf('day');
  const ahead = today.plus({ weeks: weeksAhead });
  return ahead.plus({ days: (3 - ahead.weekday + 7) % 7 }).toISODate()!;
}
const plusDays = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
const at = (date: string, time: string, zone = LONDON) => DateTime.fromISO(`${date}T${time}`, { zone });

/** Local HH:mm of each slot start on one local date (every date when omitted). */
function localTimes(body: Availability, date?: string, zone = body.timezoneName): string[] {
  return body.availableTimes
    .map((slot) => DateTime.fromISO(slot.startTime, { zone }))
    .filter((start) => date === undefined || start.toISODate() === date)
    .map((start) => start.toFormat('HH:mm'));
}
function slotAt(body: Availability, date: string, time: string, zone = body.timezoneName): Slot | undefined {
  const iso = at(date, time, zone).toUTC().toISO();
  return body.availableTimes.find((slot) => slot.startTime === iso);
}

// --- Catalog through the API ------------------------------------------------------------------

// --- Catalog through the API (test/helpers/world.ts, by way of the appointment tests' setup) ----

function search(s: Setup, query: Record<string, string | number | string[]>, headers: Record<string, string> = s.tenant.dashboard) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ LocationId: s.locationId, ServiceId: s.serviceId, ...query })) {
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  return context.app.inject({ method: 'GET', url: `/v3/availability?${params}`, headers });
}

async function available(s: Setup, query: Record<string, string | number | string[]>): Promise<Availability> {
  const response = await search(s, query);
  assert.equal(response.statusCode, 200, response.body);
  const body = json<Availability>(response);
  assert.equal(body.timezoneName, s.zone);
  return body;
}

function assertBadRequest(response: LightMyRequestResponse): { message: string; errors: FieldError[]; code?: string } {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  return body;
}

// --- Rows written straight to the database -----------------------------------------------------
// A direct insert does not clear the availability cache (the appointment and unavailability
// operations do that themselves). A test that searches, inserts and searches again calls touch().

/** A no-op service update: clears every cached search of the service. */
async function touch(s: Setup) {
  const response = await context.app.inject({ method: 'PUT', url: `/v3/service/${s.serviceId}`, headers: s.tenant.dashboard, payload: {} });
  assert.equal(response.statusCode, 200, response.body);
}

/** An appointment of the service on its first resource unless said otherwise; an IN hold expires in ten minutes. */
function appointment(
  s: Setup,
  fields: { start: DateTime; minutes?: number; status?: AppointmentStatus; expiresAt?: Date | null; resourceIds?: string[]; customerId?: string; padding?: number; serviceId?: string },
): Promise<string> {
  const status = fields.status ?? 'BK';
  return insertAppointment(context.database.db, {
    companyId: s.tenant.companyId,
    locationId: s.locationId,
    serviceId: s.serviceId,
    resourceIds: [s.resourceIds[0]!],
    ...fields,
    expiresAt: fields.expiresAt ?? (status === 'IN' ? new Date(Date.now() + 10 * 60_000) : null),
  });
}

const block = (s: Setup, scope: { locationId?: string; resourceId?: string; serviceId?: string }, start: DateTime, minutes?: number) =>
  insertBlock(context.database.db, s.tenant.companyId, scope, start, minutes);

const customer = (s: Setup) => s.tenant.customer({ firstName: 'Ada' });

// --- Tests ---------------------------------------------------------------------------------------

describe('open windows', { concurrency: true }, () => {
  test('slots start every duration from the intersection of the location, service and resource schedules', async () => {
    const date = wednesday();
    const s = await setup(context, {
      hours: { ...EVERY_DAY, wed: [{ start: '08:00', end: '18:00' }] },
      service: { weeklyAvailability: { wed: [{ start: '09:00', end: '15:00' }], thu: NINE_TO_FIVE } },
      resources: [{ weeklyAvailability: { wed: [{ start: '10:00', end: '12:00' }, { start: '13:00', end: '20:00' }] } }],
    });
    const body = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    // Wednesday: 08-18 ∩ 09-15 ∩ (10-12, 13-20) = 10-12 and 13-15. Thursday: the resource is closed.
    assert.deepEqual(localTimes(body, date), ['10:00', '11:00', '13:00', '14:00']);
    assert.deepEqual(localTimes(body, plusDays(date, 1)), []);
    const first = body.availableTimes[0]!;
    assert.equal(first.startTime, at(date, '10:00').toUTC().toISO());
    assert.equal(first.endTime, at(date, '11:00').toUTC().toISO());
    assert.deepEqual(first.resourceIds, s.resourceIds);
    assert.equal(first.remaining, 1);
    assert.deepEqual(body.availableDays, [
      { date, available: true, reason: null },
      { date: plusDays(date, 1), available: false, reason: 'no free time' },
    ]);
  });

  test('a resource schedule in its own time zone is read in that zone', async () => {
    const date = wednesday();
    // 04:00-07:00 in New York is 09:00-12:00 in London on any day both zones agree on the gap (4 or 5 hours).
    const s = await setup(context, { resources: [{ timezoneName: NEW_YORK, weeklyAvailability: { wed: [{ start: '05:00', end: '07:00' }] } }] });
    const body = await available(s, { startDate: date });
    const expected = [at(date, '05:00', NEW_YORK), at(date, '06:00', NEW_YORK)].map((t) => t.setZone(LONDON).toFormat('HH:mm'));
    assert.deepEqual(localTimes(body, date), expected);
  });

  test('bookingInterval spaces slot starts; a slot must fit in the window', async () => {
    const date = wednesday();
    const s = await setup(context, { hours: { wed: [{ start: '09:00', end: '11:00' }] }, service: { bookingInterval: 30 } });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), ['09:00', '09:30', '10:00']);
  });
});

describe('time that is taken away', { concurrency: true }, () => {
  test('a location block, a resource block and a service block remove their slots; another service\'s block does not', async () => {
    const date = wednesday();
    const s = await setup(context);
    const other = await s.tenant.service({ name: 'Other', locationIds: [s.locationId] });
    await block(s, { locationId: s.locationId }, at(date, '09:00'));
    await block(s, { resourceId: s.resourceIds[0]! }, at(date, '11:00'));
    await block(s, { serviceId: s.serviceId }, at(date, '13:30'), 30);
    await block(s, { serviceId: other }, at(date, '15:00'));
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), ['10:00', '12:00', '14:00', '15:00', '16:00']);
  });

  test('a resource block takes only that resource away', async () => {
    const date = wednesday();
    const s = await setup(context, { resources: [{}, {}] });
    const [first, second] = s.resourceIds as [string, string];
    await block(s, { resourceId: first }, at(date, '10:00'));
    const body = await available(s, { startDate: date, roundRobin: 'NONE' });
    assert.deepEqual(slotAt(body, date, '10:00')?.resourceIds, [second]);
    assert.deepEqual(slotAt(body, date, '09:00')?.resourceIds, [first, second].sort());
    assert.equal(slotAt(body, date, '09:00')?.remaining, 2);
    assert.equal(slotAt(body, date, '10:00')?.remaining, 1);
  });

  test('a recurring block in another zone than the location removes the slot at its own wall-clock time', async () => {
    const date = wednesday();
    const s = await setup(context);
    await context.database.db
      .insertInto('recurringBlocks')
      .values({
        companyId: s.tenant.companyId,
        id: randomUUID(),
        name: 'Stand-up',
        frequency: 'WEEKLY',
        startDate: DateTime.now().setZone(NEW_YORK).toISODate()!,
        startTime: '06:00',
        endTime: '07:00',
        iana: NEW_YORK,
        weekdays: [3],
        locationId: s.locationId,
      })
      .execute();
    const body = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    const blocked = at(date, '06:00', NEW_YORK).setZone(LONDON).toFormat('HH:mm');
    assert.ok(['10:00', '11:00'].includes(blocked), blocked);
    assert.deepEqual(localTimes(body, date), HOURS.filter((h) => h !== blocked));
    assert.deepEqual(localTimes(body, plusDays(date, 1)), HOURS, 'Thursday is not a day of the rule');
  });

  test('a resource-scoped recurring block closes that resource only', async () => {
    const date = wednesday();
    const s = await setup(context, { resources: [{}, {}] });
    const [first, second] = s.resourceIds as [string, string];
    await context.database.db
      .insertInto('recurringBlocks')
      .values({
        companyId: s.tenant.companyId,
        id: randomUUID(),
        name: 'Lunch',
        frequency: 'DAILY',
        startDate: plusDays(date, -3),
        startTime: '12:00',
        endTime: '13:00',
        iana: LONDON,
        resourceId: first,
      })
      .execute();
    const body = await available(s, { startDate: date });
    assert.deepEqual(slotAt(body, date, '12:00')?.resourceIds, [second]);
    assert.deepEqual(slotAt(body, date, '11:00')?.resourceIds, [first, second].sort());
  });

  test('a holiday closes the whole local day of the location', async () => {
    const date = wednesday();
    const s = await setup(context);
    await context.database.db.insertInto('holidays').values({ companyId: s.tenant.companyId, id: randomUUID(), locationId: s.locationId, date, name: 'Closed' }).execute();
    const body = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    assert.deepEqual(localTimes(body, date), []);
    assert.deepEqual(localTimes(body, plusDays(date, 1)), HOURS);
    assert.deepEqual(body.availableDays[0], { date, available: false, reason: 'holiday', holidayName: 'Closed' });
    assert.deepEqual(body.availableDays[1], { date: plusDays(date, 1), available: true, reason: null });
  });

  test('BK, RS and an unexpired IN hold take their slot; an expired IN hold, CN and RE do not', async () => {
    const date = wednesday();
    const s = await setup(context);
    await appointment(s, { start: at(date, '09:00'), status: 'BK' });
    await appointment(s, { start: at(date, '10:00'), status: 'IN', expiresAt: new Date(Date.now() + 30 * 60_000) });
    await appointment(s, { start: at(date, '11:00'), status: 'IN', expiresAt: new Date(Date.now() - 60_000) });
    await appointment(s, { start: at(date, '12:00'), status: 'CN' });
    await appointment(s, { start: at(date, '13:00'), status: 'RE' });
    await appointment(s, { start: at(date, '14:00'), status: 'RS' });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), ['11:00', '12:00', '13:00', '15:00', '16:00']);
  });

  test('an appointment of another service on the same resource takes the slot too', async () => {
    const date = wednesday();
    const s = await setup(context);
    const other = await s.tenant.service({ name: 'Other', duration: 30, locationIds: [s.locationId] });
    await appointment(s, { start: at(date, '10:30'), minutes: 30, serviceId: other });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS.filter((h) => h !== '10:00'));
  });

  test('an appointment of the resource at another location takes the slot too', async () => {
    const date = wednesday();
    const s = await setup(context);
    const branch = await s.tenant.location({ name: 'Branch', hours: EVERY_DAY });
    await context.database.db
      .insertInto('resourceLocations')
      .values({ companyId: s.tenant.companyId, resourceId: s.resourceIds[0]!, locationId: branch })
      .execute();
    const id = randomUUID();
    const start = at(date, '15:00');
    await context.database.db
      .insertInto('appointments')
      .values({ companyId: s.tenant.companyId, id, locationId: branch, serviceId: s.serviceId, status: 'BK', startTime: start.toJSDate(), endTime: start.plus({ hours: 1 }).toJSDate(), duration: 60, expiresAt: null })
      .execute();
    await context.database.db
      .insertInto('appointmentResources')
      .values({ companyId: s.tenant.companyId, appointmentId: id, resourceId: s.resourceIds[0]!, startTime: start.toJSDate(), endTime: start.plus({ hours: 1 }).toJSDate(), status: 'BK', expiresAt: null })
      .execute();
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS.filter((h) => h !== '15:00'));
  });

  test('padding after an appointment keeps the following time busy', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { padding: 30, bookingInterval: 30 } });
    await appointment(s, { start: at(date, '12:00'), padding: 30 });
    const body = await available(s, { startDate: date });
    // A new slot occupies its hour plus 30 minutes; the appointment occupies 12:00-13:30.
    assert.deepEqual(localTimes(body, date), ['09:00', '09:30', '10:00', '10:30', '13:30', '14:00', '14:30', '15:00', '15:30']);
  });

  test('a resource row written without the copies availability reads gets them from its appointment, and follows it', async () => {
    const date = wednesday();
    const s = await setup(context);
    // The helper inserts appointment_resources rows without service, duration or padding (as a
    // script would); migrations/0014's trigger fills them in.
    const id = await appointment(s, { start: at(date, '12:00'), minutes: 60, padding: 15 });
    const copies = () =>
      context.database.db
        .selectFrom('appointmentResources')
        .select(['serviceId', 'duration', 'padding', 'startTime'])
        .where('companyId', '=', s.tenant.companyId)
        .where('appointmentId', '=', id)
        .executeTakeFirstOrThrow();
    assert.deepEqual(await copies(), { serviceId: s.serviceId, duration: 60, padding: 15, startTime: at(date, '12:00').toJSDate() });
    await context.database.db.updateTable('appointments').set({ padding: 30, startTime: at(date, '11:00').toJSDate() }).where('companyId', '=', s.tenant.companyId).where('id', '=', id).execute();
    assert.deepEqual(await copies(), { serviceId: s.serviceId, duration: 60, padding: 30, startTime: at(date, '11:00').toJSDate() });
  });
});

describe('capacity and limits', { concurrency: true }, () => {
  test('bookingsPerSlot 2 with one booking at a slot leaves remaining 1 there', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { bookingsPerSlot: 2 } });
    await appointment(s, { start: at(date, '10:00') });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS);
    assert.equal(slotAt(body, date, '10:00')?.remaining, 1);
    assert.equal(slotAt(body, date, '09:00')?.remaining, 2);

    // The second booking uses the last unit; a third consumer finds nothing there.
    await appointment(s, { start: at(date, '10:00') });
    await touch(s);
    const full = await available(s, { startDate: date });
    assert.deepEqual(localTimes(full, date), HOURS.filter((h) => h !== '10:00'));
  });

  test('bookingsPerSlot is shared only at exactly the same start and end', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { bookingsPerSlot: 2, bookingInterval: 30 } });
    await appointment(s, { start: at(date, '10:00') });
    const body = await available(s, { startDate: date });
    assert.equal(slotAt(body, date, '10:00')?.remaining, 1);
    assert.equal(slotAt(body, date, '09:30'), undefined);
    assert.equal(slotAt(body, date, '10:30'), undefined);
  });

  test('dailyBookingLimitCount reached hides the day with a reason; other days stay', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { dailyBookingLimitCount: 1 }, resources: [{}, {}] });
    await appointment(s, { start: at(date, '09:00') });
    const body = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    assert.deepEqual(localTimes(body, date), []);
    assert.deepEqual(body.availableDays[0], { date, available: false, reason: 'daily booking limit reached' });
    assert.deepEqual(localTimes(body, plusDays(date, 1)), HOURS);
    assert.deepEqual(body.availableDays[1], { date: plusDays(date, 1), available: true, reason: null });
  });

  test('dailyBookingLimitMinutes hides a day once fewer minutes than the duration remain', async () => {
    const date = wednesday();
    const thursday = plusDays(date, 1);
    const s = await setup(context, { service: { dailyBookingLimitMinutes: 120 }, resources: [{}, {}] });
    await appointment(s, { start: at(date, '09:00') });
    await appointment(s, { start: at(thursday, '09:00') });
    await appointment(s, { start: at(thursday, '10:00') });
    const body = await available(s, { startDate: date, endDate: thursday });
    // Wednesday: 60 of 120 minutes left, enough for a 60-minute slot.
    assert.deepEqual(localTimes(body, date), HOURS);
    // Thursday: none left.
    assert.deepEqual(localTimes(body, thursday), []);
    assert.deepEqual(body.availableDays[1], { date: thursday, available: false, reason: 'daily booked minutes limit reached' });
  });

  test('per-customer bookingLimit closes every slot once the customer is known; RS does not count', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { bookingLimit: 1 } });
    const busy = await customer(s);
    const reserved = await customer(s);
    await appointment(s, { start: at(plusDays(date, 7), '09:00'), customerId: busy });
    await appointment(s, { start: at(plusDays(date, 7), '10:00'), customerId: reserved, status: 'RS' });

    const limited = await available(s, { startDate: date, CustomerId: busy });
    assert.deepEqual(limited.availableTimes, []);
    assert.deepEqual(limited.availableDays, [{ date, available: false, reason: 'customer booking limit reached' }]);

    const anonymous = await available(s, { startDate: date });
    assert.deepEqual(localTimes(anonymous, date), HOURS);
    const withReservation = await available(s, { startDate: date, CustomerId: reserved });
    assert.deepEqual(localTimes(withReservation, date), HOURS);
    // An expired hold is not active either.
    const lapsed = await customer(s);
    await appointment(s, { start: at(plusDays(date, 7), '11:00'), customerId: lapsed, status: 'IN', expiresAt: new Date(Date.now() - 60_000) });
    assert.deepEqual(localTimes(await available(s, { startDate: date, CustomerId: lapsed }), date), HOURS);
  });

  test('maxBookingLimit counts every appointment but RE, for ever', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { maxBookingLimit: 2 } });
    const who = await customer(s);
    const earlier = at(plusDays(date, 7), '09:00');
    await appointment(s, { start: earlier, customerId: who, status: 'CN' });
    await appointment(s, { start: earlier.plus({ hours: 1 }), customerId: who, status: 'RE' });
    assert.deepEqual(localTimes(await available(s, { startDate: date, CustomerId: who }), date), HOURS);
    await appointment(s, { start: earlier.plus({ hours: 2 }), customerId: who, status: 'CN' });
    await touch(s);
    const closed = await available(s, { startDate: date, CustomerId: who });
    assert.deepEqual(closed.availableTimes, []);
    assert.deepEqual(closed.availableDays, [{ date, available: false, reason: 'customer lifetime booking limit reached' }]);
  });

  test('a resource bookingLimit excludes that resource for the customer who reached it', async () => {
    const date = wednesday();
    const s = await setup(context, { resources: [{ bookingLimit: 1 }, {}] });
    const [limitedResource, other] = s.resourceIds as [string, string];
    const who = await customer(s);
    await appointment(s, { start: at(plusDays(date, 7), '09:00'), customerId: who, resourceIds: [limitedResource] });

    const body = await available(s, { startDate: date, CustomerId: who, roundRobin: 'NONE' });
    assert.deepEqual(localTimes(body, date), HOURS);
    for (const slot of body.availableTimes) assert.deepEqual(slot.resourceIds, [other]);

    const anonymous = await available(s, { startDate: date, roundRobin: 'NONE' });
    for (const slot of anonymous.availableTimes) assert.deepEqual(slot.resourceIds, [limitedResource, other].sort());
  });
});

describe('round robin over two resources', { concurrency: true }, () => {
  async function twoResources(roundRobin: string) {
    const date = wednesday();
    const s = await setup(context, { service: { roundRobin }, resources: [{}, {}] });
    const [first, second] = s.resourceIds as [string, string];
    // The first resource is busy at 10:00.
    await appointment(s, { start: at(date, '10:00'), resourceIds: [first] });
    return { date, s, first, second };
  }

  test('NONE lists every free resource and adds their capacity', async () => {
    const { date, s, first, second } = await twoResources('NONE');
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS);
    assert.deepEqual(slotAt(body, date, '09:00'), {
      startTime: at(date, '09:00').toUTC().toISO(),
      endTime: at(date, '10:00').toUTC().toISO(),
      resourceIds: [first, second].sort(),
      remaining: 2,
    });
    assert.deepEqual(slotAt(body, date, '10:00')?.resourceIds, [second]);
    assert.equal(slotAt(body, date, '10:00')?.remaining, 1);
    // ResourceIds narrows the search to the named resource.
    const named = await available(s, { startDate: date, ResourceIds: first });
    assert.deepEqual(localTimes(named, date), HOURS.filter((h) => h !== '10:00'));
    for (const slot of named.availableTimes) assert.deepEqual(slot.resourceIds, [first]);
  });

  test('format=compact gives each resource id once and each slot its indexes; full is the default', async () => {
    const { date, s, first, second } = await twoResources('NONE');
    const full = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    assert.deepEqual(await available(s, { startDate: date, endDate: plusDays(date, 1), format: 'full' }), full);
    const response = await search(s, { startDate: date, endDate: plusDays(date, 1), format: 'compact' });
    assert.equal(response.statusCode, 200, response.body);
    const compact = json<{ timezoneName: string; resources: string[]; availableTimes: Array<{ startTime: string; endTime: string; resourceIndexes: number[]; remaining: number }>; availableDays: Day[] }>(response);
    assert.deepEqual(compact.resources, [first, second].sort());
    assert.deepEqual(
      compact.availableTimes.map(({ resourceIndexes, ...slot }) => ({ ...slot, resourceIds: resourceIndexes.map((i) => compact.resources[i]!) })),
      full.availableTimes.map(({ resourceIds, ...slot }) => ({ ...slot, resourceIds })),
    );
    assert.deepEqual({ timezoneName: compact.timezoneName, availableDays: compact.availableDays }, { timezoneName: full.timezoneName, availableDays: full.availableDays });
    // Asked again (now from the cache), each form keeps its own shape.
    assert.deepEqual(json(await search(s, { startDate: date, endDate: plusDays(date, 1), format: 'compact' })), compact);
    assert.deepEqual(await available(s, { startDate: date, endDate: plusDays(date, 1) }), full);
    assertBadRequest(await search(s, { startDate: date, format: 'short' }));
  });

  test('RANDOM assigns one free resource to each slot', async () => {
    const { date, s, first, second } = await twoResources('RANDOM');
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS);
    for (const slot of body.availableTimes) {
      assert.equal(slot.resourceIds.length, 1);
      assert.ok([first, second].includes(slot.resourceIds[0]!));
      assert.equal(slot.remaining, 1);
    }
    assert.deepEqual(slotAt(body, date, '10:00')?.resourceIds, [second]);
  });

  test('BALANCED assigns the free resource with the fewest booked minutes in the week', async () => {
    const { date, s, first, second } = await twoResources('BALANCED');
    // Two more hours for the first resource on the Monday of the same week.
    await appointment(s, { start: at(plusDays(date, -2), '09:00'), minutes: 120, resourceIds: [first] });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS);
    for (const slot of body.availableTimes) assert.deepEqual(slot.resourceIds, [second]);

    // The second resource busy at 11:00: the first is the only free one there.
    await appointment(s, { start: at(date, '11:00'), resourceIds: [second] });
    await touch(s);
    const later = await available(s, { startDate: date, roundRobin: 'BALANCED' });
    assert.deepEqual(slotAt(later, date, '11:00')?.resourceIds, [first]);
    // The next week starts even: its Monday has no bookings yet, ties go to the lower id.
    const nextWeek = await available(s, { startDate: plusDays(date, 5) });
    for (const slot of nextWeek.availableTimes) assert.deepEqual(slot.resourceIds, [[first, second].sort()[0]]);
  });

  test('COMBINED needs every resource free at once', async () => {
    const { date, s, first, second } = await twoResources('COMBINED');
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), HOURS.filter((h) => h !== '10:00'));
    for (const slot of body.availableTimes) {
      assert.deepEqual(slot.resourceIds, [first, second].sort());
      assert.equal(slot.remaining, 1);
    }
  });

  test('the roundRobin query parameter overrides the service\'s', async () => {
    const { date, s, first, second } = await twoResources('NONE');
    const body = await available(s, { startDate: date, roundRobin: 'COMBINED' });
    assert.deepEqual(localTimes(body, date), HOURS.filter((h) => h !== '10:00'));
    assert.deepEqual(body.availableTimes[0]!.resourceIds, [first, second].sort());
  });
});

describe('duration options and allocations', { concurrency: true }, () => {
  test('with durationSelect a listed duration is searched; another one is AVAILABILITY-105', async () => {
    const date = wednesday();
    const s = await setup(context, {
      hours: { wed: NINE_TO_FIVE },
      service: { duration: 60, durationSelect: true, durationMin: 30, durationMax: 90, durationInterval: 15 },
    });
    const body = await available(s, { startDate: date, duration: 45 });
    assert.deepEqual(localTimes(body, date), ['09:00', '09:45', '10:30', '11:15', '12:00', '12:45', '13:30', '14:15', '15:00', '15:45']);
    for (const slot of body.availableTimes) assert.equal(Date.parse(slot.endTime) - Date.parse(slot.startTime), 45 * 60_000);

    const refused = assertBadRequest(await search(s, { startDate: date, duration: 50 }));
    assert.equal(refused.errors[0]!.path, 'duration');
    assert.equal(refused.errors[0]!.code, 'AVAILABILITY-105');
    assert.match(refused.errors[0]!.msg, /30, 45, 60, 75, 90/);
  });

  test('without durationSelect only the service duration is allowed', async () => {
    const date = wednesday();
    const s = await setup(context);
    assert.equal(assertBadRequest(await search(s, { startDate: date, duration: 30 })).errors[0]!.code, 'AVAILABILITY-105');
    assert.deepEqual(localTimes(await available(s, { startDate: date, duration: 60 }), date), HOURS);
  });

  test('an allocation-type service is bookable only in its allocations; a single allocation narrows a day', async () => {
    const date = wednesday();
    const thursday = plusDays(date, 1);
    const s = await setup(context, { service: { availabilityType: 'allocation' } });
    const db = context.database.db;
    const companyId = s.tenant.companyId;
    for (const day of ['wed', 'thu'] as const) {
      await db
        .insertInto('weeklyAllocations')
        .values({ companyId, id: randomUUID(), locationId: s.locationId, serviceId: s.serviceId, resourceId: null, day, startTime: '10:00', endTime: '13:00', bookingsPerSlot: 4 })
        .execute();
    }
    await db
      .insertInto('singleAllocations')
      .values({ companyId, id: randomUUID(), locationId: s.locationId, serviceId: s.serviceId, resourceId: null, date: thursday, startTime: '11:00', endTime: '15:00', bookingsPerSlot: null })
      .execute();
    const body = await available(s, { startDate: date, endDate: plusDays(date, 2) });
    assert.deepEqual(localTimes(body, date), ['10:00', '11:00', '12:00']);
    // Thursday: 10-13 narrowed by 11-15 is 11-13.
    assert.deepEqual(localTimes(body, thursday), ['11:00', '12:00']);
    // Friday: no allocation, though the location is open.
    assert.deepEqual(localTimes(body, plusDays(date, 2)), []);
    // A weekly allocation without a resource does not set the capacity.
    assert.equal(slotAt(body, date, '10:00')?.remaining, 1);
  });

  test('a weekly allocation scoped by service and resource sets its bookingsPerSlot', async () => {
    const date = wednesday();
    const s = await setup(context, { service: { availabilityType: 'allocation' } });
    await context.database.db
      .insertInto('weeklyAllocations')
      .values({
        companyId: s.tenant.companyId,
        id: randomUUID(),
        locationId: s.locationId,
        serviceId: s.serviceId,
        resourceId: s.resourceIds[0]!,
        day: 'wed',
        startTime: '14:00',
        endTime: '16:00',
        bookingsPerSlot: 3,
      })
      .execute();
    await appointment(s, { start: at(date, '14:00') });
    const body = await available(s, { startDate: date });
    assert.deepEqual(localTimes(body, date), ['14:00', '15:00']);
    assert.equal(slotAt(body, date, '14:00')?.remaining, 2);
    assert.equal(slotAt(body, date, '15:00')?.remaining, 3);
  });
});

describe('400 cases', { concurrency: true }, () => {
  test('missing LocationId, a date that does not exist, endDate before startDate, a 32-day range', async () => {
    const date = wednesday();
    const s = await setup(context);
    const missing = await context.app.inject({ method: 'GET', url: `/v3/availability?ServiceId=${s.serviceId}&startDate=${date}`, headers: s.tenant.dashboard });
    const missingBody = assertBadRequest(missing);
    assert.equal(missingBody.message, 'Validation Error');
    assert.deepEqual(missingBody.errors.map((e) => [e.location, e.path]), [['query', 'LocationId']]);

    const badDate = assertBadRequest(await search(s, { startDate: `${DateTime.now().year + 1}-02-30` }));
    assert.equal(badDate.errors[0]!.path, 'startDate');
    assertBadRequest(await search(s, { startDate: '2026-13-01' }));
    assertBadRequest(await search(s, { startDate: date, endDate: 'tomorrow' }));

    const reversed = assertBadRequest(await search(s, { startDate: date, endDate: plusDays(date, -1) }));
    assert.equal(reversed.errors[0]!.path, 'endDate');

    const long = assertBadRequest(await search(s, { startDate: date, endDate: plusDays(date, 31) }));
    assert.equal(long.errors[0]!.path, 'endDate');
    // 31 days is the most.
    const longest = await available(s, { startDate: date, endDate: plusDays(date, 30) });
    assert.equal(longest.availableDays.length, 31);
  });

  test('a startDate before the location\'s local today is AVAILABILITY-102; today is fine', async () => {
    const s = await setup(context);
    const today = DateTime.now().setZone(LONDON).toISODate()!;
    const past = assertBadRequest(await search(s, { startDate: plusDays(today, -1) }));
    assert.equal(past.errors[0]!.path, 'startDate');
    assert.equal(past.errors[0]!.code, 'AVAILABILITY-102');
    const body = await available(s, { startDate: today });
    for (const slot of body.availableTimes) assert.ok(Date.parse(slot.startTime) >= Date.now() - 60_000, 'no slot in the past');
  });

  test('another company\'s LocationId, ServiceId, ResourceIds or CustomerId is 400 naming the id, never 404', async () => {
    const date = wednesday();
    const mine = await setup(context);
    const theirs = await setup(context);
    const theirCustomer = await customer(theirs);
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ LocationId: theirs.locationId }, 'LocationId', theirs.locationId],
      [{ ServiceId: theirs.serviceId }, 'ServiceId', theirs.serviceId],
      [{ ResourceIds: theirs.resourceIds[0]! }, 'ResourceIds.0', theirs.resourceIds[0]!],
      [{ CustomerId: theirCustomer }, 'CustomerId', theirCustomer],
      [{ CustomerId: randomUUID() }, 'CustomerId', ''],
    ];
    for (const [query, path, id] of cases) {
      const response = await search(mine, { startDate: date, ...query });
      const body = assertBadRequest(response);
      const named = id || query.CustomerId!;
      assert.match(body.message, new RegExp(named), body.message);
      assert.equal(body.errors[0]!.path, path);
      assert.equal(body.errors[0]!.location, 'query');
      assert.match(body.errors[0]!.msg, new RegExp(named));
    }
    const malformed = assertBadRequest(await search(mine, { startDate: date, ResourceIds: 'not-a-uuid' }));
    assert.equal(malformed.errors[0]!.path, 'ResourceIds.0');
    // Several foreign ids at once: one 400 naming every one of them.
    const several = assertBadRequest(await search(mine, { startDate: date, LocationId: theirs.locationId, ResourceIds: theirs.resourceIds[0]!, CustomerId: theirCustomer }));
    assert.deepEqual(several.errors.map((e) => e.path).sort(), ['CustomerId', 'LocationId', 'ResourceIds.0']);
  });

  test('a resource not linked to the service, and a service not offered at the location, are 400', async () => {
    const date = wednesday();
    const s = await setup(context);
    const unlinked = await s.tenant.resource({ name: 'Elsewhere', locationIds: [s.locationId] });
    const response = assertBadRequest(await search(s, { startDate: date, ResourceIds: `${s.resourceIds[0]},${unlinked}` }));
    assert.equal(response.errors[0]!.path, 'ResourceIds.1');
    assert.match(response.errors[0]!.msg, new RegExp(unlinked));

    const otherLocation = await s.tenant.location({ name: 'Branch', hours: EVERY_DAY });
    const notOffered = assertBadRequest(await search(s, { startDate: date, LocationId: otherLocation }));
    assert.equal(notOffered.errors[0]!.path, 'ServiceId');
    assert.match(notOffered.errors[0]!.msg, new RegExp(otherLocation));
  });

  test('ResourceIds may be comma-separated or repeated', async () => {
    const date = wednesday();
    const s = await setup(context, { resources: [{}, {}, {}] });
    const [a, b] = s.resourceIds as [string, string];
    const comma = await available(s, { startDate: date, ResourceIds: `${a},${b}` });
    const repeated = await available(s, { startDate: date, ResourceIds: [a, b] });
    assert.deepEqual(comma, repeated);
    assert.deepEqual(comma.availableTimes[0]!.resourceIds, [a, b].sort());
  });
});

describe('answers, access and callers', { concurrency: true }, () => {
  test('an empty result is 200 with availableTimes [] and a reason for every day', async () => {
    const date = wednesday();
    const s = await setup(context, { hours: { mon: NINE_TO_FIVE } });
    const body = await available(s, { startDate: date, endDate: plusDays(date, 1) });
    assert.deepEqual(body, {
      timezoneName: LONDON,
      availableTimes: [],
      availableDays: [
        { date, available: false, reason: 'no free time' },
        { date: plusDays(date, 1), available: false, reason: 'no free time' },
      ],
    });
  });

  test('the book-ahead period ends the bookable days, with a reason', async () => {
    const s = await setup(context, { service: { bookAheadUnit: 'days', bookAheadValue: 7 } });
    const date = wednesday();
    const body = await available(s, { startDate: date });
    assert.deepEqual(body, { timezoneName: LONDON, availableTimes: [], availableDays: [{ date, available: false, reason: 'beyond the book-ahead period' }] });
  });

  test('a location with no resources gives an empty 200', async () => {
    const date = wednesday();
    const s = await setup(context, { resources: [] });
    const body = await available(s, { startDate: date });
    assert.deepEqual(body.availableTimes, []);
  });

  test('a LOCATIONS-scoped User gets 403 outside the scope and 200 inside', async () => {
    const date = wednesday();
    const s = await setup(context);
    const inside = await setup(context, { tenant: s.tenant });
    const user = await addMember(context, s.tenant, 'User');
    await context.database.db
      .updateTable('companyUsers')
      .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [inside.locationId] })
      .where('companyId', '=', s.tenant.companyId)
      .where('userId', '=', user.userId)
      .execute();
    const outside = await search(s, { startDate: date }, user.headers);
    assert.equal(outside.statusCode, 403, outside.body);
    assert.equal(json(outside).success, false);
    const allowed = await search(inside, { startDate: date }, user.headers);
    assert.equal(allowed.statusCode, 200, allowed.body);
    assert.deepEqual(localTimes(json(allowed), date), HOURS);
  });

  test('a machine token with read scope can search; no credentials is 401', async () => {
    const date = wednesday();
    const s = await setup(context);
    const token = await machineToken(context.app, s.tenant, 'read');
    const response = await search(s, { startDate: date }, { authorization: `Bearer ${token}` });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response), await available(s, { startDate: date }));
    const anonymous = await search(s, { startDate: date }, {});
    assert.equal(anonymous.statusCode, 401, anonymous.body);
  });
});

describe('daylight saving', { concurrency: true }, () => {
  /** The next Sundays after today on which New York springs forward and falls back. */
  function nextTransitions(): { spring: string; fall: string } {
    let spring: string | undefined;
    let fall: string | undefined;
    let day = DateTime.now().setZone(NEW_YORK).startOf('day').plus({ days: 1 });
    while (!spring || !fall) {
      const change = day.endOf('day').offset - day.offset;
      if (change > 0) spring ??= day.toISODate()!;
      if (change < 0) fall ??= day.toISODate()!;
      day = day.plus({ days: 1 });
    }
    return { spring, fall };
  }

  for (const kind of ['spring', 'fall'] as const) {
    test(`09:00-17:00 in New York on the ${kind === 'spring' ? 'spring-forward' : 'fall-back'} Sunday gives exactly eight one-hour slots`, async () => {
      const date = nextTransitions()[kind];
      assert.equal(DateTime.fromISO(date).weekday, 7);
      const s = await setup(context, { zone: NEW_YORK });
      const body = await available(s, { startDate: date });
      assert.deepEqual(localTimes(body, date), HOURS);
      assert.equal(body.availableTimes.length, 8);
      for (const [index, slot] of body.availableTimes.entries()) {
        assert.equal(slot.startTime, at(date, HOURS[index]!, NEW_YORK).toUTC().toISO());
        assert.equal(Date.parse(slot.endTime) - Date.parse(slot.startTime), 3_600_000);
      }
      // 09:00 is after the change either way: EDT (UTC-4) in spring, EST (UTC-5) in autumn.
      assert.equal(DateTime.fromISO(body.availableTimes[0]!.startTime, { zone: 'UTC' }).hour, kind === 'spring' ? 13 : 14);
    });
  }
});
