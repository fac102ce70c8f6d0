import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import fc from 'fast-check';
import { sql } from 'kysely';
import { TEST_SECRETS, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { ALWAYS_OPEN } from '../../helpers/world.js';
import { CURSOR_LIFETIME_MS, decodeCursor, encodeCursor } from '../../../src/modules/appointments/cursor.js';
import { insertAppointment } from '../../helpers/rows.js';
import { appointmentRepository } from '../../../src/modules/appointments/repository.js';
import type { AppointmentFilters } from '../../../src/modules/appointments/repository.js';
import { assertBadRequest, create, dayAhead, hold, newCustomer, operate, request, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';

// GET /v3/appointments (pages with a total) and GET /v3/appointments/cursor (a signed keyset walk).

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const LOS_ANGELES = 'America/Los_Angeles';
const INVALID_CURSOR = 'Invalid or expired appointment cursor';

interface ListPage {
  data: Appointment[];
  page: number;
  limit: number;
  total: number;
}
interface CursorPage {
  data: Appointment[];
  nextCursor: string | null;
}

function get(s: Setup, url: string, headers: Record<string, string> = s.headers) {
  return context.app.inject({ method: 'GET', url, headers });
}

async function list(s: Setup, query: string): Promise<ListPage> {
  const response = await get(s, `/v3/appointments?${query}`);
  assert.equal(response.statusCode, 200, `${query}: ${response.body}`);
  return json<ListPage>(response);
}

const ids = (rows: Array<{ id: string }>) => rows.map((r) => r.id);
const sorted = (values: string[]) => [...values].sort();

/** Every appointment of a cursor walk, page by page (at most `maxPages`, so a walk that never ends fails). */
async function walk(s: Setup, query: string, maxPages = 1000): Promise<{ rows: Appointment[]; pages: number }> {
  const rows: Appointment[] = [];
  let response = await get(s, `/v3/appointments/cursor${query ? `?${query}` : ''}`);
  for (let pages = 1; ; pages++) {
    assert.equal(response.statusCode, 200, response.body);
    const page = json<CursorPage>(response);
    rows.push(...page.data);
    if (page.nextCursor === null) return { rows, pages };
    assert.ok(pages < maxPages, `the walk did not end after ${maxPages} pages`);
    response = await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(page.nextCursor)}`);
  }
}

/**
 * A 400 for a cursor that does not verify: the specification's text on the cursor parameter. (That
 * the text is also the top-level message is checked in a test of its own.)
 */
function assertInvalidCursor(response: Awaited<ReturnType<typeof get>>, what: string) {
  const error = assertBadRequest(response);
  assert.equal(error.errors[0]?.msg, INVALID_CURSOR, `${what}: ${JSON.stringify(error)}`);
  assert.equal(error.errors[0]?.path, 'cursor', what);
  assert.equal(error.errors[0]?.location, 'query', what);
}

/** Inserts booked appointments straight into the database (one resource each), in batches. */
async function insertBooked(s: Setup, starts: number[], batchSize = 500): Promise<string[]> {
  const inserted: string[] = [];
  for (let offset = 0; offset < starts.length; offset += batchSize) {
    const rows = starts.slice(offset, offset + batchSize).map((start) => ({
      companyId: s.tenant.companyId,
      id: randomUUID(),
      locationId: s.locationId,
      serviceId: s.serviceId,
      customerId: s.customerId,
      status: 'BK' as const,
      startTime: new Date(start),
      endTime: new Date(start + 60 * 60_000),
      duration: 60,
      expiresAt: null,
      notes: null,
      rescheduledFromId: null,
      rescheduledToId: null,
      legacyId: null,
    }));
    await context.database.db.transaction().execute(async (trx) => {
      await trx.insertInto('appointments').values(rows).execute();
      await trx
        .insertInto('appointmentResources')
        .values(rows.map((r) => ({ companyId: r.companyId, appointmentId: r.id, resourceId: s.resourceIds[0]!, startTime: r.startTime, endTime: r.endTime, status: r.status, expiresAt: null })))
        .execute();
    });
    inserted.push(...rows.map((r) => r.id));
  }
  return inserted;
}

/**
 * A tenant with appointments in every status at two locations (London and Los Angeles), two
 * services, three resources and two customers, made through the API:
 *   a1 L1 S1 R1 C1 BK  day D 10:00 London      a5 L1 S1 R1 C1 RE  D+1 09:00 London (moved to a6)
 *   a2 L1 S1 R2 C2 IN  D 10:00 London          a6 L1 S1 R1 C1 BK  D+1 11:00 London
 *   a3 L1 S1 R1 C2 CN  D 12:00 London          a7 L2 S2 R3 C2 BK  D 20:00 Los Angeles (D+1 in UTC)
 *   a4 L1 S1 R2 C1 RS  D 13:00 London          a8 L2 S2 R3 C1 BK  D 09:00 Los Angeles (D in UTC)
 */
async function catalogue() {
  const s = await setup(context, { resources: [{}, {}] });
  const [r1, r2] = s.resourceIds as [string, string];
  const c1 = s.customerId;
  const c2 = await newCustomer(s);
  const l2 = await s.tenant.location({ name: 'West', timezone: LOS_ANGELES, hours: ALWAYS_OPEN });
  const s2 = await s.tenant.service({ name: 'Short', duration: 30, locationIds: [s.locationId, l2] });
  const r3 = await s.tenant.resource({ name: 'West room', locationIds: [s.locationId, l2], serviceIds: [s2] });
  const west = { ...s, locationId: l2, serviceId: s2, resourceIds: [r3], zone: LOS_ANGELES };

  const d = dayAhead(14);
  const d1 = DateTime.fromISO(d).plus({ days: 1 }).toISODate()!;
  const a1 = await create(s, { ...slot(d, '10:00'), ResourceIds: [r1], CustomerId: c1 });
  const a2 = await hold(s, { ...slot(d, '10:00'), ResourceIds: [r2], CustomerId: c2 });
  const a3 = await create(s, { ...slot(d, '12:00'), ResourceIds: [r1], CustomerId: c2 });
  assert.equal((await operate(s, a3.id, 'cancel')).statusCode, 200);
  const a4 = await hold(s, { ...slot(d, '13:00'), ResourceIds: [r2], CustomerId: c1 });
  assert.equal((await operate(s, a4.id, 'reserve')).statusCode, 200);
  const a5 = await create(s, { ...slot(d1, '09:00'), ResourceIds: [r1], CustomerId: c1 });
  const moved = await operate(s, a5.id, 'reschedule', slot(d1, '11:00'));
  assert.equal(moved.statusCode, 200, moved.body);
  const a6 = json<Appointment>(moved);
  const a7 = await create(west, { ...slot(d, '20:00', 30, LOS_ANGELES), CustomerId: c2 });
  const a8 = await create(west, { ...slot(d, '09:00', 30, LOS_ANGELES), CustomerId: c1 });
  const a = { a1: a1.id, a2: a2.id, a3: a3.id, a4: a4.id, a5: a5.id, a6: a6.id, a7: a7.id, a8: a8.id };
  return { s, a, d, d1, l1: s.locationId, l2, s1: s.serviceId, s2, r1, r2, r3, c1, c2 };
}

test('GET /v3/appointments filters by location, service, resource, customer and status', async () => {
  const { s, a, l1, l2, s1, s2, r1, r2, r3, c1, c2 } = await catalogue();
  const cases: Array<[string, string[]]> = [
    ['', Object.values(a)],
    [`LocationId=${l1}`, [a.a1, a.a2, a.a3, a.a4, a.a5, a.a6]],
    [`LocationId=${l2}`, [a.a7, a.a8]],
    [`ServiceId=${s1}`, [a.a1, a.a2, a.a3, a.a4, a.a5, a.a6]],
    [`ServiceId=${s2}`, [a.a7, a.a8]],
    [`ResourceId=${r1}`, [a.a1, a.a3, a.a5, a.a6]],
    [`ResourceId=${r2}`, [a.a2, a.a4]],
    [`ResourceId=${r3}`, [a.a7, a.a8]],
    [`CustomerId=${c1}`, [a.a1, a.a4, a.a5, a.a6, a.a8]],
    [`CustomerId=${c2}`, [a.a2, a.a3, a.a7]],
    ['status=BK', [a.a1, a.a6, a.a7, a.a8]],
    ['status=IN', [a.a2]],
    ['status=CN', [a.a3]],
    ['status=RS', [a.a4]],
    ['status=RE', [a.a5]],
    ['status=BK&status=RS', [a.a1, a.a4, a.a6, a.a7, a.a8]],
    ['status=IN&status=CN&status=RE', [a.a2, a.a3, a.a5]],
    [`LocationId=${l1}&CustomerId=${c1}&status=BK`, [a.a1, a.a6]],
    [`ServiceId=${s1}&ResourceId=${r2}&status=RS`, [a.a4]],
    [`ServiceId=${s2}&ResourceId=${r1}`, []],
  ];
  for (const [query, expected] of cases) {
    const page = await list(s, query);
    assert.deepEqual(sorted(ids(page.data)), sorted(expected), `filter ${query || '(none)'}`);
    assert.equal(page.total, expected.length, `total for ${query || '(none)'}`);
    for (const row of page.data) assert.equal(row.companyId, s.tenant.companyId);
  }
  // (A comma-separated status list has its own test below.)
  // Each appointment carries its status and resources.
  const all = new Map((await list(s, 'limit=100')).data.map((row) => [row.id, row]));
  assert.deepEqual([a.a1, a.a2, a.a3, a.a4, a.a5, a.a6, a.a7, a.a8].map((id) => all.get(id)?.status), ['BK', 'IN', 'CN', 'RS', 'RE', 'BK', 'BK', 'BK']);
  assert.deepEqual(all.get(a.a4)?.resourceIds, [r2]);
  assert.deepEqual(all.get(a.a7)?.resourceIds, [r3]);
  // An unknown status is a 400.
  assertBadRequest(await get(s, '/v3/appointments?status=XX'));
});

test('startDate and endDate are read in the location\'s zone with LocationId, else in UTC', async () => {
  const { s, a, d, d1, l1, l2 } = await catalogue();
  const d2 = DateTime.fromISO(d1).plus({ days: 1 }).toISODate()!;
  const cases: Array<[string, string[]]> = [
    // a7 is 20:00 on D in Los Angeles, which is D+1 in UTC; a8 is 09:00 on D there (still D in UTC).
    [`LocationId=${l2}&startDate=${d}&endDate=${d}`, [a.a7, a.a8]],
    [`LocationId=${l2}&startDate=${d1}`, []],
    [`LocationId=${l2}&endDate=${d}`, [a.a7, a.a8]],
    [`startDate=${d}&endDate=${d}`, [a.a1, a.a2, a.a3, a.a4, a.a8]],
    [`startDate=${d1}&endDate=${d1}`, [a.a5, a.a6, a.a7]],
    [`startDate=${d1}`, [a.a5, a.a6, a.a7]],
    [`endDate=${d}`, [a.a1, a.a2, a.a3, a.a4, a.a8]],
    [`startDate=${d2}`, []],
    [`LocationId=${l1}&startDate=${d}&endDate=${d}`, [a.a1, a.a2, a.a3, a.a4]],
    [`LocationId=${l1}&startDate=${d1}&endDate=${d1}`, [a.a5, a.a6]],
    [`LocationId=${l1}&startDate=${d}&endDate=${d1}&status=BK`, [a.a1, a.a6]],
  ];
  for (const [query, expected] of cases) {
    const page = await list(s, query);
    assert.deepEqual(sorted(ids(page.data)), sorted(expected), query);
    assert.equal(page.total, expected.length, query);
  }
  // The cursor list reads the dates the same way.
  for (const [query, expected] of cases) {
    assert.deepEqual(sorted(ids((await walk(s, `${query}&limit=2`)).rows)), sorted(expected), `cursor ${query}`);
  }
});

test('sort and order: startTime (default) or createdAt, asc (default) or desc, ties by id', async () => {
  const { s, a } = await catalogue();
  const byStart = (await list(s, 'limit=100')).data;
  const keyOf = (row: Appointment, sort: 'startTime' | 'createdAt') => `${new Date(row[sort]).toISOString()} ${row.id}`;
  const expectedByStart = [...byStart].sort((x, y) => (keyOf(x, 'startTime') < keyOf(y, 'startTime') ? -1 : 1));
  assert.deepEqual(ids(byStart), ids(expectedByStart), 'default: startTime ascending, then id');
  // a1 and a2 start together: the tie is broken by id.
  const tie = ids(byStart).filter((id) => id === a.a1 || id === a.a2);
  assert.deepEqual(tie, sorted([a.a1, a.a2]));
  assert.deepEqual(ids((await list(s, 'sort=startTime&order=asc&limit=100')).data), ids(byStart));
  assert.deepEqual(ids((await list(s, 'order=desc&limit=100')).data), ids(byStart).reverse());

  // Created in the order a1..a8 (a6 by the reschedule of a5), which is not the order of their starts.
  const created = [a.a1, a.a2, a.a3, a.a4, a.a5, a.a6, a.a7, a.a8];
  assert.notDeepEqual(ids(byStart), created);
  assert.deepEqual(ids((await list(s, 'sort=createdAt&limit=100')).data), created);
  assert.deepEqual(ids((await list(s, 'sort=createdAt&order=desc&limit=100')).data), [...created].reverse());
  assertBadRequest(await get(s, '/v3/appointments?sort=endTime'));
  assertBadRequest(await get(s, '/v3/appointments?order=up'));

  // Pages of 3 put together are the whole list, and each says the total.
  const pages = await Promise.all([1, 2, 3].map((page) => list(s, `limit=3&page=${page}`)));
  assert.deepEqual(pages.map((p) => p.data.length), [3, 3, 2]);
  assert.deepEqual(pages.map((p) => [p.page, p.limit, p.total]), [[1, 3, 8], [2, 3, 8], [3, 3, 8]]);
  assert.deepEqual(pages.flatMap((p) => ids(p.data)), ids(byStart));
  const beyond = await list(s, 'limit=3&page=4');
  assert.deepEqual([beyond.data.length, beyond.total], [0, 8]);
});

test('limit: 20 by default, at most 100; (page - 1) * limit at most 10,000', async () => {
  const s = await setup(context);
  const base = DateTime.fromISO(dayAhead(30), { zone: 'UTC' }).toMillis();
  await insertBooked(s, Array.from({ length: 130 }, (_, i) => base + i * 3_600_000));

  const first = await list(s, '');
  assert.deepEqual([first.data.length, first.page, first.limit, first.total], [20, 1, 20, 130]);
  const hundred = await list(s, 'limit=100');
  assert.deepEqual([hundred.data.length, hundred.limit, hundred.total], [100, 100, 130]);
  const rest = await list(s, 'limit=100&page=2');
  assert.deepEqual([rest.data.length, rest.page], [30, 2]);
  assert.equal(new Set([...ids(hundred.data), ...ids(rest.data)]).size, 130);

  for (const limit of ['101', '0', '1000']) {
    const error = assertBadRequest(await get(s, `/v3/appointments?limit=${limit}`));
    assert.equal(error.errors[0]?.path, 'limit', `limit=${limit}: ${JSON.stringify(error)}`);
    assert.equal(error.errors[0]?.location, 'query');
  }

  // (page - 1) * limit = 10,000 is allowed (an empty page here); 10,001 or more is a 400 on page.
  for (const [limit, page] of [[100, 101], [1, 10_001], [20, 501], [40, 251]] as const) {
    const answer = await list(s, `limit=${limit}&page=${page}`);
    assert.deepEqual([answer.data.length, answer.page, answer.limit, answer.total], [0, page, limit, 130]);
  }
  for (const [limit, page] of [[1, 10_002], [100, 102], [20, 502], [3, 3_335], [100, 1_000_000]] as const) {
    const error = assertBadRequest(await get(s, `/v3/appointments?limit=${limit}&page=${page}`));
    assert.equal(error.errors[0]?.path, 'page', `limit=${limit}&page=${page}: ${JSON.stringify(error)}`);
    assert.equal(error.errors[0]?.location, 'query');
  }
});

test('a cursor walk returns each appointment once, in order, in pages of its size, at every page-size bucket and its edges', async () => {
  // The page statement is written for a bucket of sizes (10, 20, 50, 100; repository.ts
  // afterStatement) and cut to the size by a parameter: sizes on both sides of each edge.
  const s = await setup(context);
  const base = DateTime.fromISO(dayAhead(30), { zone: 'UTC' }).toMillis();
  await insertBooked(s, Array.from({ length: 130 }, (_, i) => base + i * 3_600_000));
  const everything = ids((await list(s, 'limit=100')).data).concat(ids((await list(s, 'limit=100&page=2')).data));
  for (const limit of [1, 9, 10, 11, 20, 21, 49, 50, 51, 99, 100]) {
    const { rows, pages } = await walk(s, `limit=${limit}`);
    assert.deepEqual(ids(rows), everything, `limit=${limit}`);
    assert.equal(pages, Math.ceil(130 / limit), `limit=${limit}: pages (the last one full or not, its nextCursor null)`);
  }
});

test('another company\'s ids as filters are a 400 naming the parameter; a company never sees another\'s appointments', async () => {
  const mine = await setup(context);
  const theirs = await setup(context);
  const date = dayAhead();
  const myAppointment = await create(mine, slot(date, '10:00'));
  const theirAppointment = await create(theirs, slot(date, '10:00'));
  await hold(theirs, slot(date, '12:00'));

  const foreign: Array<[string, string]> = [
    ['LocationId', theirs.locationId],
    ['ServiceId', theirs.serviceId],
    ['ResourceId', theirs.resourceIds[0]!],
    ['CustomerId', theirs.customerId],
    ['LocationId', randomUUID()],
    ['CustomerId', randomUUID()],
  ];
  for (const [name, id] of foreign) {
    for (const path of ['/v3/appointments', '/v3/appointments/cursor']) {
      const error = assertBadRequest(await get(mine, `${path}?${name}=${id}`));
      assert.equal(error.errors[0]?.path, name, JSON.stringify(error));
      assert.equal(error.errors[0]?.location, 'query');
      assert.match(error.message, new RegExp(id));
    }
  }

  const myList = await list(mine, 'limit=100');
  assert.deepEqual(ids(myList.data), [myAppointment.id]);
  assert.equal(myList.total, 1);
  const theirList = await list(theirs, 'limit=100');
  assert.equal(theirList.total, 2);
  assert.ok(!ids(theirList.data).includes(myAppointment.id));
  // Filters on one's own ids never reach across either.
  assert.deepEqual(ids((await list(mine, `LocationId=${mine.locationId}&status=BK&status=IN`)).data), [myAppointment.id]);
  assert.deepEqual(ids((await walk(mine, 'limit=1')).rows), [myAppointment.id]);
  assert.deepEqual(sorted(ids((await walk(theirs, 'limit=1')).rows)), sorted(ids(theirList.data)));
  // Nor by id.
  assert.equal((await get(mine, `/v3/appointment/${theirAppointment.id}`)).statusCode, 404);
});

test('cursor: unknown parameters on the first request, extra parameters on a continuation', async () => {
  const s = await setup(context);
  const date = dayAhead();
  for (const time of ['10:00', '11:00', '12:00']) await create(s, slot(date, time));

  for (const key of ['foo', 'page']) {
    const error = assertBadRequest(await get(s, `/v3/appointments/cursor?limit=1&${key}=1`));
    assert.equal(error.message, `Unsupported appointment cursor query parameter ${key}`);
  }
  const onlyFoo = assertBadRequest(await get(s, '/v3/appointments/cursor?foo=bar'));
  assert.equal(onlyFoo.message, 'Unsupported appointment cursor query parameter foo');

  const first = json<CursorPage>(await get(s, '/v3/appointments/cursor?limit=1'));
  assert.equal(first.data.length, 1);
  assert.ok(first.nextCursor);
  const cursor = encodeURIComponent(first.nextCursor);
  for (const extra of ['limit=1', 'status=BK', 'foo=1', 'sort=createdAt']) {
    const error = assertBadRequest(await get(s, `/v3/appointments/cursor?cursor=${cursor}&${extra}`));
    assert.equal(error.message, 'A continuation request must provide only the appointment cursor', extra);
    const again = assertBadRequest(await get(s, `/v3/appointments/cursor?${extra}&cursor=${cursor}`));
    assert.equal(again.message, 'A continuation request must provide only the appointment cursor', extra);
  }
  // The cursor alone still works.
  const second = await get(s, `/v3/appointments/cursor?cursor=${cursor}`);
  assert.equal(second.statusCode, 200, second.body);
  assert.equal(json<CursorPage>(second).data.length, 1);
});

test('cursor: garbage, altered, expired and other companies\' cursors are "Invalid or expired appointment cursor"', async () => {
  const s = await setup(context);
  const other = await setup(context);
  const date = dayAhead();
  for (const time of ['10:00', '11:00', '12:00']) {
    await create(s, slot(date, time));
    await create(other, slot(date, time));
  }
  const first = json<CursorPage>(await get(s, '/v3/appointments/cursor?limit=1'));
  const real = first.nextCursor!;
  assert.ok(real);
  const [payload, signature] = real.split('.') as [string, string];
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);

  const state = { c: s.tenant.companyId, q: { sort: 'startTime', order: 'asc', limit: 1 }, p: [Date.parse(first.data[0]!.startTime), first.data[0]!.id] as [number, string], e: Date.now() + 600_000 };
  const forged = (changes: Partial<typeof state>, secret = TEST_SECRETS.CURSOR_SECRET) => encodeCursor(secret, { ...state, ...changes });
  // Control: a cursor made the way the server makes them is accepted, so the failures below are
  // about what was changed.
  const control = await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(forged({}))}`);
  assert.equal(control.statusCode, 200, control.body);
  assert.deepEqual(ids(json<CursorPage>(control).data), ids(json<CursorPage>(await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(real)}`)).data));

  const bad: Array<[string, string]> = [
    ['garbage', 'garbage'],
    ['empty', ''],
    ['three parts', `${real}.x`],
    ['payload only', payload],
    ['payload altered at its start', `${flip(payload, 0)}.${signature}`],
    ['payload altered in its middle', `${flip(payload, Math.floor(payload.length / 2))}.${signature}`],
    ['payload altered at its end', `${flip(payload, payload.length - 1)}.${signature}`],
    ['signature altered', `${payload}.${flip(signature, 3)}`],
    ['expired', forged({ e: Date.now() - 1000 })],
    ['expired just now', forged({ e: Date.now() })],
    ['signed with another secret', forged({}, 'another-cursor-secret-0123456789abcdef0123456789')],
    ['another company in it', forged({ c: other.tenant.companyId })],
  ];
  for (const [what, cursor] of bad) {
    assertInvalidCursor(await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(cursor)}`), what);
  }
  // A company's real cursor is no good to another company.
  const theirs = json<CursorPage>(await get(other, '/v3/appointments/cursor?limit=1')).nextCursor!;
  for (const [who, cursor] of [['theirs in mine', theirs], ['mine in theirs', real]] as const) {
    const headers = who === 'theirs in mine' ? s.headers : other.headers;
    assertInvalidCursor(await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(cursor)}`, headers), who);
  }
});

test('an invalid cursor is answered with the message "Invalid or expired appointment cursor", like the other cursor errors', async () => {
  const s = await setup(context);
  const error = assertBadRequest(await get(s, '/v3/appointments/cursor?cursor=garbage'));
  assert.equal(error.message, INVALID_CURSOR, JSON.stringify(error));
});

test('status as a comma-separated list, on the page list and the cursor list', async () => {
  const { s, a } = await catalogue();
  const cases: Array<[string, string[]]> = [
    ['status=BK,RS', [a.a1, a.a4, a.a6, a.a7, a.a8]],
    ['status=IN,CN,RE', [a.a2, a.a3, a.a5]],
    ['status=BK,RS&status=IN', [a.a1, a.a2, a.a4, a.a6, a.a7, a.a8]],
  ];
  for (const [query, expected] of cases) {
    const page = await list(s, query);
    assert.deepEqual(sorted(ids(page.data)), sorted(expected), query);
    assert.equal(page.total, expected.length, query);
    assert.deepEqual(sorted(ids((await walk(s, `${query}&limit=2`)).rows)), sorted(expected), `cursor ${query}`);
  }
});

test('cursor: a walk keeps its filters, sort and order, and matches the page list', async () => {
  const { s, l1, c1, r1 } = await catalogue();
  // (sort=createdAt walks have a test of their own below.)
  for (const query of ['', `LocationId=${l1}`, 'status=BK&status=RS', `CustomerId=${c1}&order=desc`, `ResourceId=${r1}`, 'order=desc']) {
    const expected = ids((await list(s, `${query}&limit=100`)).data);
    for (const limit of [1, 3]) {
      const { rows, pages } = await walk(s, `${query}&limit=${limit}`);
      assert.deepEqual(ids(rows), expected, `cursor ${query} limit ${limit}`);
      assert.equal(pages, Math.max(1, Math.ceil(expected.length / limit)), `pages for ${query} limit ${limit}`);
    }
  }
  // The default page size is 20; an empty result is one page with no next cursor.
  const empty = json<CursorPage>(await get(s, '/v3/appointments/cursor?status=IN&ServiceId=' + s.serviceId + '&CustomerId=' + c1));
  assert.deepEqual(empty, { data: [], nextCursor: null });
  const over = assertBadRequest(await get(s, '/v3/appointments/cursor?limit=101'));
  assert.equal(over.errors[0]?.path, 'limit');
});

test('cursor: appointments that share a start time are walked by id, each once', async () => {
  const s = await setup(context);
  const start = DateTime.fromISO(dayAhead(40), { zone: 'UTC' }).toMillis();
  const inserted = await insertBooked(s, Array.from({ length: 30 }, () => start));
  for (const order of ['asc', 'desc']) {
    const { rows } = await walk(s, `limit=7&order=${order}`);
    const expected = order === 'asc' ? sorted(inserted) : sorted(inserted).reverse();
    assert.deepEqual(ids(rows), expected, order);
  }
});

test('cursor: a walk over 5,000 appointments with concurrent inserts skips none and repeats none', async () => {
  const s = await setup(context);
  const step = 15 * 60_000;
  const base = DateTime.fromISO(dayAhead(60), { zone: 'UTC' }).toMillis();
  const existing = await insertBooked(s, Array.from({ length: 5000 }, (_, i) => base + i * step));

  const seen = new Map<string, number>();
  const addedBefore: string[] = [];
  const addedAfter: string[] = [];
  let previousStart = -Infinity;
  let pages = 0;
  let response = await get(s, '/v3/appointments/cursor?limit=100');
  for (;;) {
    assert.equal(response.statusCode, 200, response.body);
    const page = json<CursorPage>(response);
    pages++;
    for (const row of page.data) {
      seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
      const startMs = Date.parse(row.startTime);
      assert.ok(startMs > previousStart, `start times rise through the walk (page ${pages})`);
      previousStart = startMs;
    }
    if (page.nextCursor === null) break;
    assert.ok(pages < 200, 'the walk ends');
    // Meanwhile others book: before the walk's position (never to be seen: already passed), just
    // after it, and beyond the end (both still ahead of the walk, so both are seen).
    const position = Date.parse(page.data[page.data.length - 1]!.startTime);
    const k = pages * 1000;
    addedBefore.push(...(await insertBooked(s, [position - 5 * 60_000 - k, base - step - k])));
    addedAfter.push(...(await insertBooked(s, [position + 5 * 60_000 + k, base + 5000 * step + k])));
    response = await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(page.nextCursor)}`);
  }

  const repeated = [...seen].filter(([, count]) => count > 1);
  assert.deepEqual(repeated, [], 'no appointment is returned twice');
  const missing = existing.filter((id) => !seen.has(id));
  assert.deepEqual(missing, [], 'every appointment that existed at the first page is returned');
  assert.deepEqual(addedAfter.filter((id) => !seen.has(id)), [], 'appointments added ahead of the walk are returned');
  assert.deepEqual(addedBefore.filter((id) => seen.has(id)), [], 'appointments added behind the walk are not');
  assert.equal(seen.size, existing.length + addedAfter.length);
  assert.ok(pages >= 50, `${pages} pages`);
});

test('cursor: a walk sorted by createdAt returns every appointment once', async () => {
  // created_at is stored with microseconds; a position kept in milliseconds must still move past
  // the last appointment returned.
  const s = await setup(context);
  const date = dayAhead();
  const made: string[] = [];
  for (const time of ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00']) made.push((await create(s, slot(date, time))).id);
  for (const order of ['asc', 'desc'] as const) {
    const { rows } = await walk(s, `sort=createdAt&order=${order}&limit=2`, 20);
    assert.deepEqual(ids(rows), order === 'asc' ? made : [...made].reverse(), `sort=createdAt&order=${order}`);
  }
  // The same with holds made through the API, several per page.
  const held = await request(s, 'hold', slot(date, '15:00'));
  assert.equal(held.statusCode, 201, held.body);
  const { rows } = await walk(s, 'sort=createdAt&limit=3', 20);
  assert.deepEqual(ids(rows), [...made, json(held).id]);
  // And with filters, over a tenant with every status.
  const { s: other, r1, c1 } = await catalogue();
  for (const query of [`ResourceId=${r1}&sort=createdAt`, 'sort=createdAt&order=desc', `CustomerId=${c1}&sort=createdAt&status=BK`]) {
    const expected = ids((await list(other, `${query}&limit=100`)).data);
    assert.deepEqual(ids((await walk(other, `${query}&limit=1`, 20)).rows), expected, `cursor ${query}`);
  }
});

// Limits (the specification's table): "Appointments cursor list: default 20, max 100" and
// "Appointment cursor lifetime: 1 hour after the first page", carried unchanged through the walk.
test('cursor: the default page is 20, and a cursor expires one hour after the first page, unchanged by later pages', async () => {
  const s = await setup(context, { hours: ALWAYS_OPEN });
  const start = DateTime.fromISO(`${dayAhead()}T00:00`, { zone: 'Europe/London' });
  for (let i = 0; i < 45; i++) {
    await insertAppointment(context.database.db, { companyId: s.tenant.companyId, locationId: s.locationId, serviceId: s.serviceId, resourceIds: s.resourceIds, start: start.plus({ minutes: 30 * i }), minutes: 30 });
  }
  const before = Date.now();
  const first = json<CursorPage>(await get(s, '/v3/appointments/cursor'));
  const after = Date.now();
  assert.equal(first.data.length, 20, 'the default page size');
  const state = decodeCursor(TEST_SECRETS.CURSOR_SECRET, first.nextCursor!, s.tenant.companyId, before);
  assert.ok(state, 'the server\'s cursor decodes');
  assert.equal(CURSOR_LIFETIME_MS, 3_600_000);
  assert.ok(state.e >= before + CURSOR_LIFETIME_MS && state.e <= after + CURSOR_LIFETIME_MS, `expiry ${state.e - before} ms after the first request`);
  // The second page's cursor keeps the first page's expiry (it is not renewed by walking).
  const second = json<CursorPage>(await get(s, `/v3/appointments/cursor?cursor=${encodeURIComponent(first.nextCursor!)}`));
  assert.equal(second.data.length, 20);
  assert.equal(decodeCursor(TEST_SECRETS.CURSOR_SECRET, second.nextCursor!, s.tenant.companyId, before)?.e, state.e);
  // One millisecond before its expiry it is accepted; at its expiry it is not.
  assert.ok(decodeCursor(TEST_SECRETS.CURSOR_SECRET, second.nextCursor!, s.tenant.companyId, state.e - 1));
  assert.equal(decodeCursor(TEST_SECRETS.CURSOR_SECRET, second.nextCursor!, s.tenant.companyId, state.e), null);
});

test('an appointment of several resources lists each of them once, in id order, on a page and in a cursor walk, as its own read answers', async () => {
  const s = await setup(context, { resources: [{}, {}, {}] });
  const [r1, r2, r3] = s.resourceIds as [string, string, string];
  const d = dayAhead(15);
  // Two resources of one appointment, named in the opposite of id order; a third appointment's own.
  const both = await create(s, { ...slot(d, '10:00'), ResourceIds: [r1, r2].sort().reverse() });
  const alone = await create(s, { ...slot(d, '10:00'), ResourceIds: [r3] });
  const own = json<Appointment>(await get(s, `/v3/appointment/${both.id}`));
  assert.deepEqual(own.resourceIds, [r1, r2].sort());
  const paged = new Map((await list(s, `LocationId=${s.locationId}&limit=100`)).data.map((row) => [row.id, row.resourceIds]));
  const walked = new Map((await walk(s, 'limit=1')).rows.map((row) => [row.id, row.resourceIds]));
  for (const [how, rows] of [['page', paged], ['cursor', walked]] as const) {
    assert.deepEqual(rows.get(both.id), own.resourceIds, how);
    assert.deepEqual(rows.get(alone.id), [r3], how);
  }
});

test('a listed appointment, on a page and in a cursor walk, is exactly what GET /v3/appointment/:id answers, for every kind of value', async () => {
  // Lists take the appointment as PostgreSQL builds it in JSON (repository appointmentJson), the
  // single read through toApi: any text, null or not, timestamps with microseconds, several resources.
  const s = await setup(context, { resources: [{}, {}] });
  const [r1, r2] = s.resourceIds as [string, string];
  const customer = await newCustomer(s);
  const date = dayAhead(20);
  const made = [
    (await create(s, { ...slot(date, '09:00'), ResourceIds: [r2, r1], CustomerId: customer })).id,
    (await hold(s, { ...slot(date, '11:00'), ResourceIds: [r1] })).id,
  ];
  const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((value) => !value.includes('\u0000'));
  const nullable = fc.option(text, { nil: null });
  const micros = fc.integer({ min: 0, max: 999_999 });
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...made), nullable, fc.array(nullable, { minLength: 10, maxLength: 10 }), fc.option(text, { nil: null }), micros, fc.boolean(), async (id, notes, fields, legacyId, micro, confirmed) => {
      const values = Object.fromEntries(fields.map((value, i) => [`field${i + 1}`, value]));
      await context.database.db
        .updateTable('appointments')
        .set({ notes, legacyId, confirmed, ...values, updatedAt: sql<Date>`date_trunc('second', now()) + ${micro} * interval '1 microsecond'`, rescheduledFromId: micro % 2 ? randomUUID() : null })
        .where('companyId', '=', s.tenant.companyId)
        .where('id', '=', id)
        .execute();
      const own = new Map(await Promise.all(made.map(async (each) => [each, json<Appointment>(await get(s, `/v3/appointment/${each}`))] as const)));
      const paged = (await list(s, `LocationId=${s.locationId}&limit=100`)).data;
      const walked = (await walk(s, 'limit=1')).rows;
      for (const [how, rows] of [['page', paged], ['cursor', walked]] as const) {
        assert.deepEqual(new Map(rows.map((row) => [row.id, row])), own, how);
      }
    }),
    { numRuns: 30 },
  );
});

test('a caller whose location scope holds no location lists nothing, on a page and in a cursor walk, and each filter narrows the same way in both', async () => {
  // The repository directly: every shape of filter compiles its own statement (reusableQuery), and
  // an empty scope is a shape of its own ("false"), which no route reaches with a real user today.
  const s = await setup(context, { resources: [{}, {}] });
  const d = dayAhead(16);
  const first = await create(s, { ...slot(d, '10:00'), ResourceIds: [s.resourceIds[0]!] });
  const second = await create(s, { ...slot(d, '11:00'), ResourceIds: [s.resourceIds[1]!] });
  const ids = (data: string) => (JSON.parse(data) as Array<{ id: string }>).map((a) => a.id);
  const both = async (filters: AppointmentFilters) => {
    const page = await appointmentRepository.pageJson(context.database.db, { companyId: s.tenant.companyId, filters, sort: 'startTime', order: 'asc', limit: 100 }, 0);
    const walked = await appointmentRepository.afterJson(context.database.db, { companyId: s.tenant.companyId, filters, sort: 'startTime', order: 'asc', limit: 100 }, null);
    assert.deepEqual(ids(walked.data), ids(page.data));
    assert.equal(page.total, ids(page.data).length);
    return ids(page.data);
  };
  assert.deepEqual(await both({ locationIds: [] }), []);
  assert.deepEqual(await both({ locationIds: [s.locationId] }), [first.id, second.id]);
  assert.deepEqual(await both({ locationIds: [randomUUID()] }), []);
  assert.deepEqual(await both({ ResourceId: s.resourceIds[1] }), [second.id]);
  assert.deepEqual(await both({ status: ['BK'] }), [first.id, second.id]);
  assert.deepEqual(await both({ status: ['CN', 'RE'] }), []);
  assert.deepEqual(await both({ from: new Date(Date.parse(second.startTime)) }), [second.id]);
  assert.deepEqual(await both({ to: new Date(Date.parse(second.startTime)) }), [first.id]);
});

test('the repository refuses a cursor page size outside 1 to 100, as its statement is written for the size\'s bucket', async () => {
  // The route's schema allows 1 to 100 only; the repository must not trust that alone, since the
  // size's bucket is written into the SQL as a literal (repository.ts afterStatement).
  const s = await setup(context, { resources: [{}] });
  for (const limit of [0, 101, 1.5, Number.NaN]) {
    await assert.rejects(appointmentRepository.afterJson(context.database.db, { companyId: s.tenant.companyId, filters: {}, sort: 'startTime', order: 'asc', limit }, null), RangeError, `limit ${limit}`);
  }
  const page = await appointmentRepository.afterJson(context.database.db, { companyId: s.tenant.companyId, filters: {}, sort: 'startTime', order: 'asc', limit: 100 }, null);
  assert.deepEqual([page.data, page.next], ['[]', null]);
});

test('an appointment carries its resource ids (migrations/0017), in resource_id order; a row written without them answers the same from its resource rows', async () => {
  const s = await setup(context, { service: { roundRobin: 'COMBINED' }, resources: [{}, {}, {}] });
  const d = dayAhead(17);
  const booked = await create(s, { ...slot(d, '10:00'), ResourceIds: [s.resourceIds[2]!, s.resourceIds[0]!, s.resourceIds[1]!] });
  const ordered = [...s.resourceIds].sort();
  const stored = async () =>
    (await sql<{ resourceIds: string[] | null }>`select resource_ids::text[] as "resourceIds" from appointments where company_id = ${s.tenant.companyId} and id = ${booked.id}`.execute(context.database.db)).rows[0]!.resourceIds;
  assert.deepEqual(await stored(), ordered);
  assert.deepEqual(booked.resourceIds, ordered);
  const answers = async () => {
    const own = json<Appointment>(await get(s, `/v3/appointment/${booked.id}`));
    const paged = (await list(s, `LocationId=${s.locationId}&limit=100`)).data.find((row) => row.id === booked.id);
    const walked = (await walk(s, 'limit=100')).rows.find((row) => row.id === booked.id);
    return [own, paged, walked];
  };
  const withCopy = await answers();
  for (const answer of withCopy) assert.deepEqual(answer?.resourceIds, ordered);
  // Without the copy (a script, a fixture, a writer older than the column): read from appointment_resources.
  await sql`update appointments set resource_ids = null where company_id = ${s.tenant.companyId} and id = ${booked.id}`.execute(context.database.db);
  assert.equal(await stored(), null);
  assert.deepEqual(await answers(), withCopy);
});

test('migrations/0017 fills each appointment\'s copy from its resource rows, in resource_id order (none: an empty list)', async () => {
  const s = await setup(context, { service: { roundRobin: 'COMBINED' }, resources: [{}, {}, {}] });
  const d = dayAhead(18);
  const booked = await create(s, { ...slot(d, '10:00'), ResourceIds: [s.resourceIds[1]!, s.resourceIds[0]!] });
  const fixture = await insertAppointment(context.database.db, { companyId: s.tenant.companyId, locationId: s.locationId, serviceId: s.serviceId, resourceIds: [s.resourceIds[2]!, s.resourceIds[0]!], start: DateTime.fromISO(`${d}T12:00`, { zone: 'Europe/London' }) });
  const bare = await insertAppointment(context.database.db, { companyId: s.tenant.companyId, locationId: s.locationId, serviceId: s.serviceId, resourceIds: [], start: DateTime.fromISO(`${d}T14:00`, { zone: 'Europe/London' }) });
  const copies = async () =>
    new Map(
      (await sql<{ id: string; stored: string[] | null }>`select id, resource_ids::text[] as stored from appointments where company_id = ${s.tenant.companyId}`.execute(context.database.db)).rows.map((row) => [row.id, row.stored]),
    );
  assert.equal((await copies()).get(fixture), null, 'a fixture writes no copy');
  await sql`update appointments set resource_ids = null where company_id = ${s.tenant.companyId}`.execute(context.database.db);
  // The migration's own statement, for this company only (other files share the database).
  const migration = readFileSync(new URL('../../../migrations/0017_appointment_resource_ids.sql', import.meta.url), 'utf8');
  const fill = migration.slice(migration.indexOf('update appointments')).trim().replace(/;$/, '');
  await sql`${sql.raw(fill)} where a.company_id = ${s.tenant.companyId}`.execute(context.database.db);
  assert.deepEqual(
    await copies(),
    new Map([
      [booked.id, [s.resourceIds[0]!, s.resourceIds[1]!].sort()],
      [fixture, [s.resourceIds[0]!, s.resourceIds[2]!].sort()],
      [bare, []],
    ]),
  );
});
