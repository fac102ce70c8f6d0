// Holidays: POST, GET, DELETE /v3/unavailability/holiday[/:id] (docs/api.md, Unavailability).
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertInvalid, assertNotOwned, assertStatus, caller, created, machineHeaders, member, newWorld, ok } from './fixtures.js';
import type { World } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());
const call = caller(() => context);

interface Holiday {
  id: string;
  companyId: string;
  locationId: string;
  date: string;
  name: string;
  createdAt: string;
}
interface HolidayPage {
  data: Holiday[];
  page: number;
  limit: number;
  total: number;
}

const URL_ = '/v3/unavailability/holiday';

async function createHoliday(world: World, payload: Record<string, unknown>, headers = world.headers) {
  return created<Holiday>(await call('POST', URL_, headers, payload));
}
async function list(world: World, query = '', headers = world.headers) {
  return ok<HolidayPage>(await call('GET', `${URL_}${query}`, headers));
}

describe('POST /v3/unavailability/holiday', () => {
  test('closes a location for a day', async () => {
    const world = await newWorld(context);
    const holiday = await createHoliday(world, { LocationId: world.location, date: '2030-12-25', name: 'Christmas Day' });
    assert.match(holiday.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual({ ...holiday, id: undefined, createdAt: undefined }, {
      id: undefined,
      companyId: world.tenant.companyId,
      locationId: world.location,
      date: '2030-12-25',
      name: 'Christmas Day',
      createdAt: undefined,
    });
    assert.deepEqual((await list(world)).data, [holiday]);
  });

  test('a second holiday on the same date at the same location is 409; another location is fine', async () => {
    const world = await newWorld(context);
    await createHoliday(world, { LocationId: world.location, date: '2030-01-01', name: 'New Year' });
    const duplicate = await call('POST', URL_, world.headers, { LocationId: world.location, date: '2030-01-01', name: 'Again' });
    assertStatus(duplicate, 409, /already has a holiday on 2030-01-01/);
    assert.equal(json(duplicate).errors[0].path, 'date');
    await createHoliday(world, { LocationId: world.location2, date: '2030-01-01', name: 'New Year' });
    assert.equal((await list(world)).total, 2);
  });

  test('LocationId, date (YYYY-MM-DD) and name (1 to 100 characters) are required', async () => {
    const world = await newWorld(context);
    const valid = { LocationId: world.location, date: '2030-05-01', name: 'May Day' };
    for (const key of ['LocationId', 'date', 'name'] as const) {
      const { [key]: _omitted, ...rest } = valid;
      assertInvalid(await call('POST', URL_, world.headers, rest), [{ path: key }]);
    }
    for (const date of ['2030-5-1', '2030-02-30', '2030-05-01T00:00:00Z', '0000-12-25', '3000-01-01']) assertInvalid(await call('POST', URL_, world.headers, { ...valid, date }), [{ path: 'date' }]);
    for (const name of ['', 'x'.repeat(101), 7]) assertInvalid(await call('POST', URL_, world.headers, { ...valid, name }), [{ path: 'name' }]);
    assertInvalid(await call('POST', URL_, world.headers, { ...valid, LocationId: 'nope' }), [{ path: 'LocationId' }]);
    assertInvalid(await call('POST', URL_, world.headers, { ...valid, ResourceId: world.resource }), [{ path: 'ResourceId' }]);
    assert.equal((await list(world)).total, 0);
  });
});

describe('GET /v3/unavailability/holiday', () => {
  test('lists by date, filtered by LocationId and a date range', async () => {
    const world = await newWorld(context);
    const c = await createHoliday(world, { LocationId: world.location, date: '2030-12-26', name: 'Boxing Day' });
    const a = await createHoliday(world, { LocationId: world.location2, date: '2030-01-26', name: 'Republic Day' });
    const b = await createHoliday(world, { LocationId: world.location, date: '2030-04-19', name: 'Good Friday' });
    const ids = async (query: string) => (await list(world, query)).data.map((h) => h.id);
    assert.deepEqual(await ids(''), [a.id, b.id, c.id]);
    assert.deepEqual(await ids(`?LocationId=${world.location}`), [b.id, c.id]);
    assert.deepEqual(await ids('?startDate=2030-04-19&endDate=2030-12-25'), [b.id]);
    assert.deepEqual(await ids('?limit=1&page=3'), [c.id]);
    assertInvalid(await call('GET', `${URL_}?startDate=2030-02-01&endDate=2030-01-01`, world.headers), [{ path: 'endDate', location: 'query' }]);
  });
});

describe('DELETE /v3/unavailability/holiday/:id', () => {
  test('deletes: 204, then 404', async () => {
    const world = await newWorld(context);
    const holiday = await createHoliday(world, { LocationId: world.location, date: '2030-12-25', name: 'Christmas Day' });
    assert.equal((await call('DELETE', `${URL_}/${holiday.id}`, world.headers)).statusCode, 204);
    assertStatus(await call('DELETE', `${URL_}/${holiday.id}`, world.headers), 404);
    assert.equal((await list(world)).total, 0);
    // The date is free again.
    await createHoliday(world, { LocationId: world.location, date: '2030-12-25', name: 'Christmas Day' });
  });
});

describe('tenant isolation', () => {
  test('another company\'s holiday in the path is 404; its location in a body or filter is 400 naming it', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    const holiday = await createHoliday(theirs, { LocationId: theirs.location, date: '2030-12-25', name: 'Christmas Day' });
    for (const headers of [mine.headers, await machineHeaders(context, mine)]) {
      assertStatus(await call('DELETE', `${URL_}/${holiday.id}`, headers), 404);
      for (const id of [theirs.location, randomUUID()]) {
        assertNotOwned(await call('POST', URL_, headers, { LocationId: id, date: '2030-12-24', name: 'Eve' }), id, 'LocationId', 'body');
        assertNotOwned(await call('GET', `${URL_}?LocationId=${id}`, headers), id, 'LocationId', 'query');
      }
    }
    assert.equal((await list(mine)).total, 0);
    assert.deepEqual((await list(theirs)).data, [holiday]);
  });
});

describe('roles, location scope and machine tokens', () => {
  test('Resource role 403 on writes; a location-scoped user only at their locations', async () => {
    const world = await newWorld(context);
    const resourceUser = await member(context, world, 'Resource');
    const scoped = await member(context, world, 'User', [world.location]);
    const admin = await member(context, world, 'Admin');
    const far = await createHoliday(world, { LocationId: world.location2, date: '2030-08-15', name: 'Independence Day' }, admin);

    assertStatus(await call('POST', URL_, resourceUser, { LocationId: world.location, date: '2030-12-25', name: 'Christmas' }), 403, /Insufficient role/);
    assertStatus(await call('DELETE', `${URL_}/${far.id}`, resourceUser), 403, /Insufficient role/);
    assertStatus(await call('POST', URL_, scoped, { LocationId: world.location2, date: '2030-12-25', name: 'Christmas' }), 403, /outside your location access/);
    assertStatus(await call('DELETE', `${URL_}/${far.id}`, scoped), 403, /outside your location access/);
    const near = await createHoliday(world, { LocationId: world.location, date: '2030-12-25', name: 'Christmas' }, scoped);

    assert.deepEqual((await list(world, '', scoped)).data.map((h) => h.id), [near.id]);
    assert.deepEqual((await list(world, '', resourceUser)).data.map((h) => h.id), [near.id]);
    assert.equal((await list(world)).total, 2);
  });

  test('a machine write token writes; a read token reads only', async () => {
    const world = await newWorld(context);
    const writer = await machineHeaders(context, world);
    const reader = await machineHeaders(context, world, 'read');
    const holiday = await createHoliday(world, { LocationId: world.location, date: '2030-12-25', name: 'Christmas' }, writer);
    assertStatus(await call('POST', URL_, reader, { LocationId: world.location, date: '2030-12-26', name: 'Boxing Day' }), 403, /Insufficient scope/);
    assertStatus(await call('DELETE', `${URL_}/${holiday.id}`, reader), 403, /Insufficient scope/);
    assert.equal((await list(world, '', reader)).total, 1);
  });
});
