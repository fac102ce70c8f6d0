// engineWindow's packed times (modules/availability/repository.ts): PostgreSQL sends each as
// milliseconds after the window's start, and the reader adds the start back. Busy appointments'
// come from the stored epoch milliseconds (migrations/0015, integer subtraction); external busy
// time's and the service bookings' from msAfter (floating point).
// Every time must come back as the exact arithmetic (epochMs: numeric, truncated) reads it: whole
// milliseconds, times with microseconds on either side of a millisecond, before the window's start
// (negative) and weeks after it, for busy appointments, external busy time and the service's bookings.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createAvailabilityRepository } from '../../../src/modules/availability/repository.js';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Bookable, TenantFixture } from '../../helpers/world.js';

let context: TestContext;
let tenant: TenantFixture;
let at: Bookable;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
  tenant = await context.world.tenant();
  at = await tenant.bookable({ resources: 2 });
});
after(() => context.close());

/** The window's start: a time with a fraction of its own, so no difference is a whole number by luck. */
const FROM = '2031-03-10T05:00:00.123Z';
/** Starts as PostgreSQL stores them (microseconds), each followed by the minutes it lasts. */
const STARTS: Array<[string, number]> = [
  ['2031-03-10 05:00:00.123+00', 30], // the window's start itself: 0
  ['2031-03-10 09:15:00+00', 45],
  ['2031-03-10 05:02:09.734+00', 30], // 129,611 ms after: its seconds as a float8 fall just below, so floor() alone would answer 129,610
  ['2031-03-10 09:15:00.000999+00', 30], // 999 microseconds into a millisecond: stays in it
  ['2031-03-10 09:15:00.001+00', 30],
  ['2031-03-10 09:15:00.001001+00', 30],
  ['2031-03-09 22:59:59.999999+00', 60], // before the window's start: negative
  ['2031-03-09 08:00:00.5+00', 30], // most of a day before
  ['2031-04-09 23:59:59.999+00', 30], // a month after
];

describe('engineWindow packed times', () => {
  test('busy rows, external busy time and the service bookings come back to the millisecond, as numeric arithmetic truncates them', async () => {
    const db = context.database.db;
    const { companyId } = tenant;
    const resourceId = at.resourceIds[0]!;
    const ids = STARTS.map(() => randomUUID());
    const connectionId = randomUUID();
    await db.insertInto('externalCalendarConnections').values({ companyId, id: connectionId, resourceId, provider: 'google', status: 'connected' }).execute();
    await db.insertInto('externalCalendars').values({ companyId, connectionId, calendarId: 'primary', name: 'Primary', syncCursor: null }).execute();
    for (const [i, [start, minutes]] of STARTS.entries()) {
      const end = sql`${start}::timestamptz + make_interval(mins => ${minutes})`;
      await sql`insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding)
        values (${companyId}, ${ids[i]}, ${at.locationId}, ${at.serviceId}, 'BK', ${start}::timestamptz, ${end}, ${minutes}, 5)`.execute(db);
      await sql`insert into appointment_resources (company_id, appointment_id, resource_id, start_time, end_time, status, service_id, duration, padding)
        values (${companyId}, ${ids[i]}, ${resourceId}, ${start}::timestamptz, ${end}, 'BK', ${at.serviceId}, ${minutes}, 5)`.execute(db);
      await sql`insert into external_busy_intervals (company_id, connection_id, calendar_id, event_key, resource_id, start_time, end_time, transparency, event_type)
        values (${companyId}, ${connectionId}, 'primary', ${`event-${i}`}, ${resourceId}, ${start}::timestamptz, ${end}, 'opaque', 'default')`.execute(db);
    }
    // The exact reading: numeric epoch seconds, truncated to the millisecond.
    const exact = await sql<{ start: string; end: string }>`select floor(extract(epoch from start_time) * 1000)::int8::text as start, floor(extract(epoch from end_time) * 1000)::int8::text as end
      from appointment_resources where company_id = ${companyId}`.execute(db);
    const from = new Date(FROM);
    const rows = await createAvailabilityRepository(db).engineWindow(companyId, {
      scope: { locationIds: [at.locationId], resourceIds: [resourceId], serviceIds: [at.serviceId] },
      from,
      to: new Date('2031-04-11T05:00:00Z'),
      fromDate: '2031-03-10',
      toDate: '2031-04-10',
      now: new Date('2031-03-01T00:00:00Z'),
      dailyLimits: true,
    });
    // Ordered by start and then end in milliseconds, on both sides: two rows share a millisecond of
    // start (microseconds apart), and the scan may give them in either order.
    const byStart = <T extends { start: number; end?: number }>(list: T[]) => [...list].sort((a, b) => a.start - b.start || (a.end ?? 0) - (b.end ?? 0));
    const expected = byStart(exact.rows.map((r) => ({ start: Number(r.start), end: Number(r.end) })));
    const times = (list: Array<{ start: number; end: number }>) => byStart(list).map(({ start, end }) => ({ start, end }));
    // Busy rows are those ending less than a day before the window's start (busyBounds); external time overlaps it.
    assert.deepEqual(times(rows.busy), expected.filter((t) => t.end > from.getTime() - 86_400_000));
    assert.deepEqual(times(rows.external), expected.filter((t) => t.end > from.getTime()));
    assert.deepEqual(byStart(rows.serviceBookings).map((b) => b.start), expected.filter((t) => t.start >= from.getTime()).map((t) => t.start));
    // The 999-microsecond time stays in its millisecond; the one a microsecond past the next is in that one.
    assert.ok(expected.some((t) => t.start === Date.parse('2031-03-10T09:15:00.000Z')));
    assert.equal(expected.filter((t) => t.start === Date.parse('2031-03-10T09:15:00.001Z')).length, 2);
    assert.ok(expected.some((t) => t.start === Date.parse('2031-03-09T22:59:59.999Z')));
  });
});
