// GET /v3/unavailability (and its deprecated /calendar alias): one snake_case row per concrete
// interval that removes availability, never merged: weekly closed hours, recurring occurrences,
// holidays, blocks and appointments (BK, RS, unexpired IN).
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { AppointmentStatus, WeeklyAvailability } from '../../../src/platform/database/schema.js';
import { insertAppointment } from '../../helpers/rows.js';
import { LONDON, NINE_TO_FIVE } from '../../helpers/world.js';
import { ALL_DAY } from '../../helpers/hours.js';
import type { Bookable, Fields, Tenant, TenantFixture } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

interface Row {
  start_time: string;
  end_time: string;
  source: 'weekly' | 'recurring' | 'appointment' | 'holiday' | 'block';
  entity_type: 'location' | 'resource' | 'service';
  entity_id: string;
  source_id: string | null;
  external_transparency: null;
  external_event_type: null;
  external_busy: null;
}

const NEW_YORK = 'America/New_York';
const ROW_KEYS = ['end_time', 'entity_id', 'entity_type', 'external_busy', 'external_event_type', 'external_transparency', 'source', 'source_id', 'start_time'];

/** A Monday at least two weeks ahead in London. */
function monday(): string {
  const ahead = DateTime.now().setZone(LONDON).startOf('day').plus({ weeks: 2 });
  return ahead.plus({ days: (8 - ahead.weekday) % 7 }).toISODate()!;
}
const plusDays = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
const at = (date: string, time: string, zone = LONDON) => {
  if (time === '24:00') return DateTime.fromISO(plusDays(date, 1), { zone });
  return DateTime.fromISO(`${date}T${time}`, { zone });
};
const iso = (t: DateTime) => t.toUTC().toISO()!;
/** [start, end] of a row as local wall-clock `YYYY-MM-DD HH:mm`. */
const local = (row: Row, zone = LONDON) => [row.start_time, row.end_time].map((t) => DateTime.fromISO(t, { zone }).toFormat('yyyy-MM-dd HH:mm'));

interface Setup extends Bookable {
  tenant: TenantFixture;
  resourceId: string;
}

/** A location and a service without weekly hours unless given, and one resource, Ann. */
async function setup(options: { locationHours?: WeeklyAvailability; serviceHours?: WeeklyAvailability; resource?: Fields } = {}): Promise<Setup> {
  const tenant = await context.world.tenant();
  const shop = await tenant.bookable({
    hours: options.locationHours ?? null,
    service: { weeklyAvailability: options.serviceHours ?? null },
    resources: [{ name: 'Ann', ...options.resource }],
  });
  return { ...shop, tenant, resourceId: shop.resourceIds[0]! };
}

function calendar(tenant: Tenant, query: string, path = '/v3/unavailability') {
  return context.app.inject({ method: 'GET', url: `${path}?${query}`, headers: tenant.dashboard });
}

/** A 200 whose rows all have exactly the specified snake_case fields, external ones null. */
async function rows(tenant: Tenant, query: string, path?: string): Promise<Row[]> {
  const response = await calendar(tenant, query, path);
  assert.equal(response.statusCode, 200, response.body);
  const data = json<{ data: Row[] }>(response).data;
  for (const row of data) {
    assert.deepEqual(Object.keys(row).sort(), ROW_KEYS);
    assert.equal(row.external_transparency, null);
    assert.equal(row.external_event_type, null);
    assert.equal(row.external_busy, null);
    assert.ok(Date.parse(row.end_time) > Date.parse(row.start_time));
  }
  return data;
}

function assertBadRequest(response: LightMyRequestResponse) {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.ok(Array.isArray(body.errors));
  return body as { message: string; errors: Array<{ path: string; msg: string; location: string }> };
}

function appointment(s: Setup, start: DateTime, status: AppointmentStatus, expiresAt: Date | null = null, resourceIds = [s.resourceId]) {
  return insertAppointment(context.database.db, { companyId: s.tenant.companyId, locationId: s.locationId, serviceId: s.serviceId, resourceIds, start, status, expiresAt });
}

describe('weekly closed hours', { concurrency: true }, () => {
  test('an open day gives a row before, between and after its intervals; a closed day one whole-day row; none are merged', async () => {
    const date = monday();
    const tuesday = plusDays(date, 1);
    const s = await setup({ locationHours: { mon: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:00' }] } });
    // A block inside closed hours stays its own row; the weekly rows around it are unchanged.
    await context.database.db
      .insertInto('blocks')
      .values({ companyId: s.tenant.companyId, id: randomUUID(), locationId: s.locationId, startTime: at(date, '07:00').toJSDate(), endTime: at(date, '10:00').toJSDate() })
      .execute();
    const data = await rows(s.tenant, `LocationIds=${s.locationId}&startDate=${date}&endDate=${tuesday}`);
    const weekly = data.filter((r) => r.source === 'weekly');
    assert.deepEqual(
      weekly.map((r) => local(r)),
      [
        [`${date} 00:00`, `${date} 09:00`],
        [`${date} 12:00`, `${date} 13:00`],
        [`${date} 17:00`, `${tuesday} 00:00`],
        [`${tuesday} 00:00`, `${plusDays(tuesday, 1)} 00:00`],
      ],
    );
    for (const row of weekly) {
      assert.equal(row.entity_type, 'location');
      assert.equal(row.entity_id, s.locationId);
      assert.equal(row.source_id, null);
    }
    const blocks = data.filter((r) => r.source === 'block');
    assert.deepEqual(blocks.map((r) => local(r)), [[`${date} 07:00`, `${date} 10:00`]]);
    assert.equal(data.length, 5);
    // Sorted by start.
    assert.deepEqual(data.map((r) => r.start_time), [...data.map((r) => r.start_time)].sort());
  });

  test('a closed day on a daylight-saving change is one row of the whole local day (25 hours in autumn)', async () => {
    let day = DateTime.now().setZone(LONDON).startOf('day').plus({ days: 1 });
    while (day.endOf('day').offset >= day.offset) day = day.plus({ days: 1 });
    const date = day.toISODate()!;
    const s = await setup({ locationHours: { mon: NINE_TO_FIVE } });
    const data = await rows(s.tenant, `LocationIds=${s.locationId}&startDate=${date}`);
    assert.equal(data.length, 1);
    assert.equal(data[0]!.start_time, iso(at(date, '00:00')));
    assert.equal(data[0]!.end_time, iso(at(plusDays(date, 1), '00:00')));
    assert.equal(Date.parse(data[0]!.end_time) - Date.parse(data[0]!.start_time), 25 * 3_600_000);
  });

  test('service and resource schedules give rows of their own entity; a resource schedule is read in its zone', async () => {
    const date = monday();
    const s = await setup({
      serviceHours: { mon: [{ start: '10:00', end: '24:00' }] },
      resource: { timezoneName: NEW_YORK, weeklyAvailability: { mon: [{ start: '00:00', end: '12:00' }], tue: [{ start: '00:00', end: '24:00' }] } },
    });
    // The service's schedule is read in the location's zone, like the availability search reads it.
    const service = await rows(s.tenant, `ServiceId=${s.serviceId}&LocationIds=${s.locationId}&startDate=${date}`);
    assert.deepEqual(service.map((r) => [r.source, r.entity_type, r.entity_id, ...local(r)]), [['weekly', 'service', s.serviceId, `${date} 00:00`, `${date} 10:00`]]);

    const resource = await rows(s.tenant, `ResourceIds=${s.resourceId}&LocationIds=${s.locationId}&startDate=${date}`);
    const resourceRows = resource.filter((r) => r.entity_type === 'resource');
    // Over the London Monday the New York resource is in its closed Sunday until 05:00, open
    // Monday morning, closed Monday 12:00-24:00; its Tuesday is open all day.
    assert.deepEqual(
      resourceRows.map((r) => [r.start_time, r.end_time]),
      [
        [iso(at(plusDays(date, -1), '00:00', NEW_YORK)), iso(at(date, '00:00', NEW_YORK))],
        [iso(at(date, '12:00', NEW_YORK)), iso(at(date, '24:00', NEW_YORK))],
      ],
    );
  });
});

describe('recurring blocks, holidays, blocks', { concurrency: true }, () => {
  test('recurring occurrences are rows with source recurring and the entity of the rule\'s scope', async () => {
    const date = monday();
    const s = await setup();
    const db = context.database.db;
    const companyId = s.tenant.companyId;
    const resourceRule = randomUUID();
    const locationRule = randomUUID();
    const serviceRule = randomUUID();
    const startDate = plusDays(date, -14);
    await db
      .insertInto('recurringBlocks')
      .values([
        // Every day 06:00-07:00 in New York, a resource's.
        { companyId, id: resourceRule, name: 'Gym', frequency: 'DAILY', startDate, startTime: '06:00', endTime: '07:00', iana: NEW_YORK, resourceId: s.resourceId },
        // Mondays 12:00-12:30 in London, the location's.
        { companyId, id: locationRule, name: 'Lunch', frequency: 'WEEKLY', startDate, startTime: '12:00', endTime: '12:30', iana: LONDON, weekdays: [1], locationId: s.locationId },
        // Tuesdays 16:00-17:00, the service's.
        { companyId, id: serviceRule, name: 'Review', frequency: 'WEEKLY', startDate, startTime: '16:00', endTime: '17:00', iana: LONDON, weekdays: [2], serviceId: s.serviceId },
      ])
      .execute();
    const data = await rows(s.tenant, `LocationIds=${s.locationId}&ResourceIds=${s.resourceId}&ServiceId=${s.serviceId}&startDate=${date}&endDate=${plusDays(date, 1)}`);
    const recurring = data.filter((r) => r.source === 'recurring');
    const expected = [
      { start: at(date, '06:00', NEW_YORK), minutes: 60, type: 'resource', id: s.resourceId, rule: resourceRule },
      { start: at(plusDays(date, 1), '06:00', NEW_YORK), minutes: 60, type: 'resource', id: s.resourceId, rule: resourceRule },
      { start: at(date, '12:00'), minutes: 30, type: 'location', id: s.locationId, rule: locationRule },
      { start: at(plusDays(date, 1), '16:00'), minutes: 60, type: 'service', id: s.serviceId, rule: serviceRule },
    ].sort((a, b) => a.start.toMillis() - b.start.toMillis());
    assert.deepEqual(
      recurring.map((r) => [r.start_time, r.end_time, r.entity_type, r.entity_id, r.source_id]),
      expected.map((e) => [iso(e.start), iso(e.start.plus({ minutes: e.minutes })), e.type, e.id, e.rule]),
    );
  });

  // Recurring block rule: availability and the calendar read a rule the same way. Both call
  // recurrenceIntervals; this pins that they agree, for rules in three zones, one overnight.
  test('availability offers no slot inside a recurring occurrence the calendar lists, and the slots right before and after each one', async () => {
    const date = monday();
    const s = await setup({ locationHours: { mon: ALL_DAY, tue: ALL_DAY } });
    const db = context.database.db;
    const companyId = s.tenant.companyId;
    const startDate = plusDays(date, -14);
    await db
      .insertInto('recurringBlocks')
      .values([
        // Every night 22:00-02:00 in Kiritimati (UTC+14), the resource's: across its local midnight.
        { companyId, id: randomUUID(), name: 'Night', frequency: 'DAILY', startDate, startTime: '22:00', endTime: '02:00', iana: 'Pacific/Kiritimati', resourceId: s.resourceId },
        // Mondays and Tuesdays 06:00-07:00 in New York, the location's.
        { companyId, id: randomUUID(), name: 'Stand-up', frequency: 'WEEKLY', startDate, startTime: '06:00', endTime: '07:00', iana: NEW_YORK, weekdays: [1, 2], locationId: s.locationId },
        // Tuesdays 16:00-17:00 in London, the service's.
        { companyId, id: randomUUID(), name: 'Review', frequency: 'WEEKLY', startDate, startTime: '16:00', endTime: '17:00', iana: LONDON, weekdays: [2], serviceId: s.serviceId },
      ])
      .execute();
    const endDate = plusDays(date, 1);
    const recurring = (await rows(s.tenant, `LocationIds=${s.locationId}&ResourceIds=${s.resourceId}&ServiceId=${s.serviceId}&startDate=${date}&endDate=${endDate}`))
      .filter((r) => r.source === 'recurring')
      .map((r) => ({ start: Date.parse(r.start_time), end: Date.parse(r.end_time) }));
    assert.ok(recurring.length >= 5, JSON.stringify(recurring));

    const search = await context.app.inject({
      method: 'GET',
      url: `/v3/availability?LocationId=${s.locationId}&ServiceId=${s.serviceId}&startDate=${date}&endDate=${endDate}`,
      headers: s.tenant.dashboard,
    });
    assert.equal(search.statusCode, 200, search.body);
    const slots = json<{ availableTimes: Array<{ startTime: string; endTime: string }> }>(search).availableTimes.map((t) => ({ start: Date.parse(t.startTime), end: Date.parse(t.endTime) }));
    assert.ok(slots.length > 0);
    const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;
    for (const slot of slots) {
      assert.ok(!recurring.some((r) => overlaps(slot, r)), `slot ${new Date(slot.start).toISOString()} lies in a recurring occurrence the calendar lists`);
    }
    // An occurrence takes away no more than its own time: the hours before and after it are
    // offered when no other occurrence covers them and they lie in the searched days.
    const windowStart = at(date, '00:00').toMillis();
    const windowEnd = at(plusDays(endDate, 1), '00:00').toMillis();
    for (const r of recurring) {
      for (const next of [{ start: r.start - 3_600_000, end: r.start }, { start: r.end, end: r.end + 3_600_000 }]) {
        if (next.start < windowStart || next.end > windowEnd || recurring.some((other) => overlaps(next, other))) continue;
        assert.ok(slots.some((slot) => slot.start === next.start), `no slot at ${new Date(next.start).toISOString()}, beside an occurrence the calendar lists`);
      }
    }
  });

  test('a holiday is a row of the whole local day of its location; blocks are rows of their scope', async () => {
    const date = monday();
    const s = await setup();
    const db = context.database.db;
    const companyId = s.tenant.companyId;
    const holiday = randomUUID();
    await db.insertInto('holidays').values({ companyId, id: holiday, locationId: s.locationId, date: plusDays(date, 1), name: 'Closed' }).execute();
    const blocks = { location: randomUUID(), resource: randomUUID(), service: randomUUID() };
    await db
      .insertInto('blocks')
      .values([
        { companyId, id: blocks.location, locationId: s.locationId, startTime: at(date, '09:00').toJSDate(), endTime: at(date, '10:00').toJSDate(), reason: 'Fire drill' },
        { companyId, id: blocks.resource, resourceId: s.resourceId, startTime: at(date, '11:00').toJSDate(), endTime: at(date, '12:00').toJSDate() },
        { companyId, id: blocks.service, serviceId: s.serviceId, startTime: at(date, '13:00').toJSDate(), endTime: at(date, '14:00').toJSDate() },
      ])
      .execute();
    const data = await rows(s.tenant, `LocationIds=${s.locationId}&ResourceIds=${s.resourceId}&ServiceId=${s.serviceId}&startDate=${date}&endDate=${plusDays(date, 1)}`);
    assert.deepEqual(
      data.map((r) => [r.source, r.entity_type, r.entity_id, r.source_id, ...local(r)]),
      [
        ['block', 'location', s.locationId, blocks.location, `${date} 09:00`, `${date} 10:00`],
        ['block', 'resource', s.resourceId, blocks.resource, `${date} 11:00`, `${date} 12:00`],
        ['block', 'service', s.serviceId, blocks.service, `${date} 13:00`, `${date} 14:00`],
        ['holiday', 'location', s.locationId, holiday, `${plusDays(date, 1)} 00:00`, `${plusDays(date, 2)} 00:00`],
      ],
    );
    // Only the location's: the resource alone does not bring the location's holiday or blocks.
    const resourceOnly = await rows(s.tenant, `ResourceIds=${s.resourceId}&startDate=${date}&endDate=${plusDays(date, 1)}`);
    assert.deepEqual(resourceOnly.map((r) => r.source_id), [blocks.resource]);
  });
});

describe('locations in other zones', { concurrency: true }, () => {
  test('a holiday of a location in another zone is a row when its local day overlaps the window', async () => {
    const date = monday();
    const s = await setup();
    const tokyo = await s.tenant.location({ name: 'Tokyo', timezone: 'Asia/Tokyo' });
    const holiday = randomUUID();
    // Tokyo's Tuesday starts at 15:00 on the London Monday (the first location sets the window's zone).
    await context.database.db.insertInto('holidays').values({ companyId: s.tenant.companyId, id: holiday, locationId: tokyo, date: plusDays(date, 1), name: 'Closed' }).execute();
    const data = await rows(s.tenant, `LocationIds=${s.locationId},${tokyo}&startDate=${date}`);
    assert.deepEqual(
      data.map((r) => [r.source, r.entity_id, r.source_id, r.start_time, r.end_time]),
      [['holiday', tokyo, holiday, iso(at(plusDays(date, 1), '00:00', 'Asia/Tokyo')), iso(at(plusDays(date, 2), '00:00', 'Asia/Tokyo'))]],
    );
  });
});

describe('appointments', { concurrency: true }, () => {
  test('BK, RS and unexpired IN are rows per resource; CN, RE and expired IN are not', async () => {
    const date = monday();
    const s = await setup();
    const second = await s.tenant.resource({ name: 'Bob', locationIds: [s.locationId], serviceIds: [s.serviceId] });
    const booked = await appointment(s, at(date, '09:00'), 'BK', null, [s.resourceId, second]);
    const reserved = await appointment(s, at(date, '10:00'), 'RS');
    const held = await appointment(s, at(date, '11:00'), 'IN', new Date(Date.now() + 10 * 60_000));
    await appointment(s, at(date, '12:00'), 'IN', new Date(Date.now() - 60_000));
    await appointment(s, at(date, '13:00'), 'CN');
    await appointment(s, at(date, '14:00'), 'RE');

    const byResource = await rows(s.tenant, `ResourceIds=${s.resourceId}&startDate=${date}`);
    assert.deepEqual(
      byResource.map((r) => [r.source, r.entity_type, r.entity_id, r.source_id, ...local(r)]),
      [
        ['appointment', 'resource', s.resourceId, booked, `${date} 09:00`, `${date} 10:00`],
        ['appointment', 'resource', s.resourceId, reserved, `${date} 10:00`, `${date} 11:00`],
        ['appointment', 'resource', s.resourceId, held, `${date} 11:00`, `${date} 12:00`],
      ],
    );
    // By location: every resource of each appointment at the location, one row each.
    const byLocation = await rows(s.tenant, `LocationIds=${s.locationId}&startDate=${date}`);
    const nine = byLocation.filter((r) => r.source_id === booked);
    assert.deepEqual(nine.map((r) => r.entity_id).sort(), [s.resourceId, second].sort());
    assert.equal(byLocation.length, 4);
  });
});

describe('the query', { concurrency: true }, () => {
  test('at least one of LocationIds, ResourceIds or ServiceId is required', async () => {
    const s = await setup();
    const body = assertBadRequest(await calendar(s.tenant, `startDate=${monday()}`));
    assert.match(body.errors[0]!.msg, /LocationIds, ResourceIds or ServiceId/);
    assertBadRequest(await calendar(s.tenant, `LocationIds=&startDate=${monday()}`));
  });

  test('the removed roundRobin parameter is a 400', async () => {
    const s = await setup();
    const body = assertBadRequest(await calendar(s.tenant, `LocationIds=${s.locationId}&startDate=${monday()}&roundRobin=NONE`));
    assert.match(body.message, /roundRobin/);
  });

  test('the deprecated /v3/unavailability/calendar returns the same payload', async () => {
    const date = monday();
    const s = await setup({ locationHours: { mon: NINE_TO_FIVE } });
    await appointment(s, at(date, '10:00'), 'BK');
    await context.database.db.insertInto('holidays').values({ companyId: s.tenant.companyId, id: randomUUID(), locationId: s.locationId, date: plusDays(date, 1), name: 'Closed' }).execute();
    const query = `LocationIds=${s.locationId}&ResourceIds=${s.resourceId}&startDate=${date}&endDate=${plusDays(date, 2)}`;
    const current = await calendar(s.tenant, query);
    const deprecated = await calendar(s.tenant, query, '/v3/unavailability/calendar');
    assert.equal(deprecated.statusCode, 200, deprecated.body);
    assert.deepEqual(json(deprecated), json(current));
    assert.ok(json(current).data.length >= 5);
    assertBadRequest(await calendar(s.tenant, `startDate=${date}`, '/v3/unavailability/calendar'));
  });

  test('another company\'s ids are a 400 naming them', async () => {
    const date = monday();
    const mine = await setup();
    const theirs = await setup();
    const cases: Array<[string, string, string]> = [
      [`LocationIds=${theirs.locationId}`, 'LocationIds.0', theirs.locationId],
      [`LocationIds=${mine.locationId},${theirs.locationId}`, 'LocationIds.1', theirs.locationId],
      [`ResourceIds=${theirs.resourceId}`, 'ResourceIds.0', theirs.resourceId],
      [`ServiceId=${theirs.serviceId}`, 'ServiceId', theirs.serviceId],
    ];
    for (const [query, path, id] of cases) {
      const body = assertBadRequest(await calendar(mine.tenant, `${query}&startDate=${date}`));
      assert.match(body.message, new RegExp(id));
      assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', path]]);
    }
    assertBadRequest(await calendar(mine.tenant, `LocationIds=not-a-uuid&startDate=${date}`));
  });

  test('LocationIds comma-separated and repeated give the same rows', async () => {
    const date = monday();
    const s = await setup({ locationHours: { mon: NINE_TO_FIVE } });
    const other = await s.tenant.location({ name: 'Branch', hours: { mon: [{ start: '08:00', end: '18:00' }] } });
    const comma = await rows(s.tenant, `LocationIds=${s.locationId},${other}&startDate=${date}`);
    const repeated = await rows(s.tenant, `LocationIds=${s.locationId}&LocationIds=${other}&startDate=${date}`);
    assert.deepEqual(comma, repeated);
    assert.deepEqual(new Set(comma.map((r) => r.entity_id)), new Set([s.locationId, other]));
    assert.equal(comma.length, 4);
  });

  test('bad dates and a range over 31 days are 400', async () => {
    const date = monday();
    const s = await setup();
    assertBadRequest(await calendar(s.tenant, `LocationIds=${s.locationId}`));
    assertBadRequest(await calendar(s.tenant, `LocationIds=${s.locationId}&startDate=2027-02-30`));
    assertBadRequest(await calendar(s.tenant, `LocationIds=${s.locationId}&startDate=${date}&endDate=${plusDays(date, -1)}`));
    assertBadRequest(await calendar(s.tenant, `LocationIds=${s.locationId}&startDate=${date}&endDate=${plusDays(date, 31)}`));
    await rows(s.tenant, `LocationIds=${s.locationId}&startDate=${date}&endDate=${plusDays(date, 30)}`);
  });
});
