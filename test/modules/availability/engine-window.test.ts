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
import pg from 'pg';
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

/** The statements `run` sends (text and values), as node-postgres is given them (both databases go through it). */
async function statementsOf(run: () => Promise<unknown>): Promise<Array<{ text: string; values: unknown[] }>> {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [first, second] = args as [unknown, unknown];
    if (typeof first === 'string') sent.push({ text: first, values: (second as unknown[]) ?? [] });
    else if (first && typeof (first as { text?: unknown }).text === 'string') {
      const config = first as { text: string; values?: unknown[] };
      sent.push({ text: config.text, values: config.values ?? [] });
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

/** A value as an SQL literal, for EXECUTE of a PREPAREd statement (uuids, times, numbers and arrays of uuids here). */
function literal(value: unknown): string {
  const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return quoted(value.toISOString());
  if (Array.isArray(value)) return quoted(`{${value.map((item) => `"${String(item)}"`).join(',')}}`);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return quoted(String(value));
}

/** The index names in a plan (EXPLAIN's JSON format; a bitmap index scan names no relation, so only the index). */
function indexesOf(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (typeof record['Index Name'] === 'string') found.push(record['Index Name']);
    for (const value of Object.values(record)) (Array.isArray(value) ? value : [value]).forEach(walk);
  };
  walk(plan);
  return found;
}

// The status rules are written into statements as literals (availability/status-filter.ts) so that
// a prepared statement's generic plan, which PostgreSQL switches to after five runs when it looks
// no dearer, can still use the partial busy index (`where status in ('IN', 'RS', 'BK')`). With
// the statuses as parameters, a booking's check read every appointment row of the company.
describe('generic plans use the partial busy-time index', () => {
  test('engineWindow and busyAppointmentsOfResources read appointment_resources through appointment_resources_busy_idx', async () => {
    const db = context.database.db;
    const { companyId } = tenant;
    const repository = createAvailabilityRepository(db);
    const window = { from: new Date('2031-05-01T00:00:00Z'), to: new Date('2031-05-08T00:00:00Z'), now: new Date('2031-04-01T00:00:00Z') };
    const statements = await statementsOf(async () => {
      await repository.engineWindow(companyId, {
        scope: { locationIds: [at.locationId], resourceIds: at.resourceIds, serviceIds: [at.serviceId] },
        ...window,
        fromDate: '2031-05-01',
        toDate: '2031-05-07',
        dailyLimits: false,
      });
      await repository.busyAppointmentsOfResources(companyId, at.resourceIds, window);
    });
    const reads = statements.filter((statement) => statement.text.includes('appointment_resources'));
    assert.equal(reads.length, 2);
    // A year of the company's appointments outside the window, and the table's statistics: the
    // planner then weighs reading all of them (the company's primary key) against the window's
    // (the busy index), as on a server, instead of two near-empty paths whose costs tie.
    await sql`with made as (
        insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding)
        select ${companyId}::uuid, gen_random_uuid(), ${at.locationId}::uuid, ${at.serviceId}::uuid, 'BK', t, t + interval '30 minutes', 30, 0
        from generate_series(timestamptz '2032-01-01 09:00+00', timestamptz '2032-12-31 09:00+00', interval '3 hours') as t
        returning id, start_time, end_time)
      insert into appointment_resources (company_id, appointment_id, resource_id, start_time, end_time, status, service_id, duration, padding)
      select ${companyId}::uuid, made.id, ${at.resourceIds[0]!}::uuid, made.start_time, made.end_time, 'BK', ${at.serviceId}::uuid, 30, 0 from made`.execute(db);
    await sql`analyze appointments`.execute(db);
    await sql`analyze appointment_resources`.execute(db);
    await db.connection().execute(async (connection) => {
      // The generic plan, and no sequential scan to fall back on: only an index can read the table.
      await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
      await sql`set enable_seqscan = off`.execute(connection);
      try {
        for (const [i, statement] of reads.entries()) {
          await sql.raw(`prepare generic_${i} as ${statement.text}`).execute(connection);
          const explained = await sql.raw<{ 'QUERY PLAN': unknown }>(`explain (format json) execute generic_${i}(${statement.values.map(literal).join(', ')})`).execute(connection);
          await sql.raw(`deallocate generic_${i}`).execute(connection);
          const plan = explained.rows[0]!['QUERY PLAN'];
          const indexes = indexesOf(typeof plan === 'string' ? JSON.parse(plan) : plan).filter((name) => name.startsWith('appointment_resources_'));
          assert.deepEqual(indexes, ['appointment_resources_busy_idx'], `statement ${i}: ${JSON.stringify(indexes)}`);
        }
      } finally {
        await sql`reset plan_cache_mode`.execute(connection);
        await sql`reset enable_seqscan`.execute(connection);
      }
    });
  });
});
