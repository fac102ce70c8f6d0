// One-off blocks: POST, GET and DELETE /v3/unavailability/blocks (the specification, Unavailability;
// docs/api.md, Unavailability). Codes come from the family of the scope (docs/api.md, Legacy code catalog,
// CALENDAR and blocks): LocationId CALENDARBLOCK, ResourceId RESOURCEBLOCK, ServiceId SERVICEBLOCK.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertInvalid, assertNotOwned, assertStatus, caller, created, machineHeaders, member, newWorld, ok, scopes } from './fixtures.js';
import type { World } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());
const call = caller(() => context);

interface Block {
  id: string;
  companyId: string;
  locationId: string | null;
  resourceId: string | null;
  serviceId: string | null;
  startTime: string;
  endTime: string;
  reason: string;
  createdAt: string;
}
interface BlockPage {
  data: Block[];
  page: number;
  limit: number;
  total: number;
}

const URL_ = '/v3/unavailability/blocks';
const body = (scope: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  ...scope,
  startTime: '2030-03-10T09:00:00+01:00',
  endTime: '2030-03-10T12:30:00+01:00',
  reason: 'Staff training',
  ...extra,
});

async function createBlock(world: World, payload: Record<string, unknown>, headers = world.headers) {
  return created<Block>(await call('POST', URL_, headers, payload));
}
async function list(world: World, query = '', headers = world.headers) {
  return ok<BlockPage>(await call('GET', `${URL_}${query}`, headers));
}

describe('POST /v3/unavailability/blocks', () => {
  test('creates a location block with its times as UTC instants', async () => {
    const world = await newWorld(context);
    const block = await createBlock(world, body({ LocationId: world.location }));
    assert.match(block.id, /^[0-9a-f-]{36}$/);
    assert.equal(block.companyId, world.tenant.companyId);
    assert.equal(block.locationId, world.location);
    assert.equal(block.resourceId, null);
    assert.equal(block.serviceId, null);
    assert.equal(block.startTime, '2030-03-10T08:00:00.000Z');
    assert.equal(block.endTime, '2030-03-10T11:30:00.000Z');
    assert.equal(block.reason, 'Staff training');
    assert.ok(!Number.isNaN(Date.parse(block.createdAt)));
    assert.deepEqual((await list(world)).data, [block]);
  });

  test('a resource or a service may be the scope instead', async () => {
    const world = await newWorld(context);
    const resourceBlock = await createBlock(world, body({ ResourceId: world.resource }));
    assert.deepEqual([resourceBlock.locationId, resourceBlock.resourceId, resourceBlock.serviceId], [null, world.resource, null]);
    const serviceBlock = await createBlock(world, body({ ServiceId: world.service }, { startTime: '2030-03-11T00:00:00Z', endTime: '2030-03-12T00:00:00Z' }));
    assert.deepEqual([serviceBlock.locationId, serviceBlock.resourceId, serviceBlock.serviceId], [null, null, world.service]);
    assert.equal(serviceBlock.startTime, '2030-03-11T00:00:00.000Z');
  });

  test('exactly one of LocationId, ResourceId and ServiceId', async () => {
    const world = await newWorld(context);
    assertInvalid(await call('POST', URL_, world.headers, body({})), [{ path: 'LocationId' }]);
    assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: world.location, ResourceId: world.resource })), [{ path: 'ResourceId' }]);
    assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: world.location, ResourceId: world.resource, ServiceId: world.service })), [
      { path: 'ResourceId' },
      { path: 'ServiceId' },
    ]);
    assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: 'not-a-uuid' })), [{ path: 'LocationId' }]);
    assert.equal((await list(world)).total, 0);
  });

  test('reason is required and 2 to 50 characters, with the code of the scope\'s family', async () => {
    const world = await newWorld(context);
    const codes = {
      CALENDARBLOCK: { required: 'CALENDARBLOCK-103', length: 'CALENDARBLOCK-104' },
      RESOURCEBLOCK: { required: 'RESOURCEBLOCK-100', length: 'RESOURCEBLOCK-101' },
      SERVICEBLOCK: { required: 'SERVICEBLOCK-103', length: 'SERVICEBLOCK-104' },
    };
    for (const { family, scope } of scopes(world)) {
      const { reason: _reason, ...withoutReason } = body(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutReason), [{ path: 'reason', code: codes[family].required }]);
      for (const reason of ['x', 'y'.repeat(51), '   z  ']) {
        assertInvalid(await call('POST', URL_, world.headers, body(scope, { reason })), [{ path: 'reason', code: codes[family].length }]);
      }
      assertInvalid(await call('POST', URL_, world.headers, body(scope, { reason: 42 })), [{ path: 'reason', code: codes[family].length }]);
      // The limits themselves are allowed.
      await createBlock(world, body(scope, { reason: 'ab' }));
      await createBlock(world, body(scope, { reason: 'c'.repeat(50) }));
    }
  });

  test('start and end are required ISO 8601 instants with an offset', async () => {
    const world = await newWorld(context);
    for (const { family, scope } of scopes(world)) {
      const { startTime: _s, ...withoutStart } = body(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutStart), [{ path: 'startTime', code: `${family}-REQUIRED-100` }]);
      const { endTime: _e, ...withoutEnd } = body(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutEnd), [{ path: 'endTime', code: `${family}-REQUIRED-101` }]);
    }
    // Outside 1900 to 2999 is refused before it reaches the database.
    for (const startTime of ['2030-03-10T09:00:00', '2030-03-10', 'tomorrow', '2030-02-30T09:00:00Z', '0000-01-01T00:00:00Z', '1899-12-31T23:00:00Z']) {
      assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: world.location }, { startTime })), [{ path: 'startTime' }]);
    }
  });

  test('the end must come after the start: TIME-101 when equal, TIME-100 on the same date, the date code across dates', async () => {
    const world = await newWorld(context);
    const dateCodes = { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-DATE-100', SERVICEBLOCK: 'SERVICEBLOCK-100' };
    for (const { family, scope } of scopes(world)) {
      // The same instant written with two offsets is still equal.
      assertInvalid(await call('POST', URL_, world.headers, body(scope, { startTime: '2030-03-10T09:00:00+01:00', endTime: '2030-03-10T08:00:00Z' })), [
        { path: 'endTime', code: `${family}-TIME-101` },
      ]);
      assertInvalid(await call('POST', URL_, world.headers, body(scope, { startTime: '2030-03-10T12:00:00+01:00', endTime: '2030-03-10T09:00:00+01:00' })), [
        { path: 'endTime', code: `${family}-TIME-100` },
      ]);
      assertInvalid(await call('POST', URL_, world.headers, body(scope, { startTime: '2030-03-11T09:00:00+01:00', endTime: '2030-03-10T10:00:00+01:00' })), [
        { path: 'endTime', code: dateCodes[family] },
      ]);
    }
    assert.equal((await list(world)).total, 0);
  });

  test('unknown fields are refused', async () => {
    const world = await newWorld(context);
    assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: world.location }, { colour: 'red' })), [{ path: 'colour' }]);
    assertInvalid(await call('POST', URL_, world.headers, body({ LocationId: world.location }, { endTime: '9999-12-31T23:30:00-05:00' })), [{ path: 'endTime' }]);
  });
});

describe('GET /v3/unavailability/blocks', () => {
  test('lists by start time with page, limit and total; filters by scope id', async () => {
    const world = await newWorld(context);
    const late = await createBlock(world, body({ LocationId: world.location }, { startTime: '2030-05-01T10:00:00Z', endTime: '2030-05-01T11:00:00Z' }));
    const early = await createBlock(world, body({ ResourceId: world.resource }, { startTime: '2030-04-01T10:00:00Z', endTime: '2030-04-01T11:00:00Z' }));
    const middle = await createBlock(world, body({ ServiceId: world.service }, { startTime: '2030-04-15T10:00:00Z', endTime: '2030-04-15T11:00:00Z' }));

    const all = await list(world);
    assert.deepEqual(all.data.map((b) => b.id), [early.id, middle.id, late.id]);
    assert.deepEqual([all.page, all.limit, all.total], [1, 20, 3]);
    const second = await list(world, '?limit=1&page=2');
    assert.deepEqual(second.data.map((b) => b.id), [middle.id]);
    assert.equal(second.total, 3);

    assert.deepEqual((await list(world, `?LocationId=${world.location}`)).data.map((b) => b.id), [late.id]);
    assert.deepEqual((await list(world, `?ResourceId=${world.resource}`)).data.map((b) => b.id), [early.id]);
    assert.deepEqual((await list(world, `?ServiceId=${world.service}`)).data.map((b) => b.id), [middle.id]);
    // Several filters: blocks matching any of them.
    assert.deepEqual((await list(world, `?LocationId=${world.location}&ServiceId=${world.service}`)).data.map((b) => b.id), [middle.id, late.id]);
    assert.equal((await list(world, `?LocationId=${world.location2}`)).total, 0);
  });

  test('startDate and endDate keep blocks overlapping those days, in the LocationId filter\'s time zone', async () => {
    const world = await newWorld(context);
    // 2030-07-01 in London (BST, +01:00) is 2030-06-30T23:00Z to 2030-07-01T23:00Z.
    const lateEvening = await createBlock(world, body({ LocationId: world.location }, { startTime: '2030-06-30T23:30:00Z', endTime: '2030-07-01T00:30:00Z' }));
    const nextDay = await createBlock(world, body({ LocationId: world.location }, { startTime: '2030-07-01T23:00:00Z', endTime: '2030-07-02T01:00:00Z' }));
    const ids = async (query: string) => (await list(world, query)).data.map((b) => b.id);
    assert.deepEqual(await ids(`?LocationId=${world.location}&startDate=2030-07-01&endDate=2030-07-01`), [lateEvening.id]);
    assert.deepEqual(await ids(`?LocationId=${world.location}&startDate=2030-07-02`), [nextDay.id]);
    // Without a LocationId the days are UTC days.
    assert.deepEqual(await ids('?startDate=2030-07-01&endDate=2030-07-01'), [lateEvening.id, nextDay.id]);
    assert.deepEqual(await ids('?endDate=2030-06-30'), [lateEvening.id]);

    assertInvalid(await call('GET', `${URL_}?startDate=2030-07-02&endDate=2030-07-01`, world.headers), [{ path: 'endDate', location: 'query' }]);
    assertInvalid(await call('GET', `${URL_}?startDate=2030-13-01`, world.headers), [{ path: 'startDate', location: 'query' }]);
    assertInvalid(await call('GET', `${URL_}?startDate=0000-01-01`, world.headers), [{ path: 'startDate', location: 'query' }]);
    assertInvalid(await call('GET', `${URL_}?limit=501`, world.headers), [{ path: 'limit', location: 'query', code: 'LIMIT-100' }]);
  });
});

describe('DELETE /v3/unavailability/blocks/:id', () => {
  test('removes the block: 204, then 404', async () => {
    const world = await newWorld(context);
    const block = await createBlock(world, body({ ResourceId: world.resource }));
    const removed = await call('DELETE', `${URL_}/${block.id}`, world.headers);
    assert.equal(removed.statusCode, 204, removed.body);
    assert.equal(removed.body, '');
    assert.equal((await list(world)).total, 0);
    assertStatus(await call('DELETE', `${URL_}/${block.id}`, world.headers), 404);
    assertStatus(await call('DELETE', `${URL_}/${randomUUID()}`, world.headers), 404);
    assertInvalid(await call('DELETE', `${URL_}/abc`, world.headers), [{ path: 'id', location: 'params' }]);
  });
});

describe('tenant isolation', () => {
  test('another company\'s block in the path is 404 and stays', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    const block = await createBlock(theirs, body({ LocationId: theirs.location }));
    for (const headers of [mine.headers, await machineHeaders(context, mine)]) {
      assertStatus(await call('DELETE', `${URL_}/${block.id}`, headers), 404);
    }
    assert.equal((await list(theirs)).total, 1);
    assert.equal((await list(mine)).total, 0);
  });

  test('another company\'s scope id in the body or a filter is 400 naming it, never 404', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    const machine = await machineHeaders(context, mine);
    for (const headers of [mine.headers, machine]) {
      for (const [key, id] of [
        ['LocationId', theirs.location],
        ['ResourceId', theirs.resource],
        ['ServiceId', theirs.service],
        ['LocationId', randomUUID()],
      ] as const) {
        assertNotOwned(await call('POST', URL_, headers, body({ [key]: id })), id, key, 'body');
        assertNotOwned(await call('GET', `${URL_}?${key}=${id}`, headers), id, key, 'query');
      }
    }
    assert.equal((await list(mine)).total, 0);
    assert.equal((await list(theirs)).total, 0);
  });

  test('an archived location is not a valid scope', async () => {
    const world = await newWorld(context);
    assert.equal((await call('DELETE', `/v3/location/${world.location2}`, world.headers)).statusCode, 204);
    assertNotOwned(await call('POST', URL_, world.headers, body({ LocationId: world.location2 })), world.location2, 'LocationId', 'body');
  });
});

describe('roles, location scope and machine tokens', () => {
  test('Owner, Admin and User write; a Resource-role user is refused with 403 but reads its own', async () => {
    const world = await newWorld(context);
    const admin = await member(context, world, 'Admin');
    const user = await member(context, world, 'User');
    const resourceUser = await member(context, world, 'Resource');
    const byAdmin = await createBlock(world, body({ LocationId: world.location }), admin);
    await createBlock(world, body({ ResourceId: world.resource }), user);
    const elsewhere = await createBlock(world, body({ LocationId: world.location2 }));

    assertStatus(await call('POST', URL_, resourceUser, body({ ResourceId: world.resource })), 403, /Insufficient role/);
    assertStatus(await call('DELETE', `${URL_}/${byAdmin.id}`, resourceUser), 403, /Insufficient role/);
    // Reads: its resource, that resource's locations and services, not location 2.
    const seen = await list(world, '', resourceUser);
    assert.equal(seen.total, 2);
    assert.equal(seen.data.some((b) => b.id === elsewhere.id), false);

    assert.equal((await call('DELETE', `${URL_}/${byAdmin.id}`, user)).statusCode, 204);
  });

  test('a location-scoped user writes and sees only blocks of their locations', async () => {
    const world = await newWorld(context);
    const scoped = await member(context, world, 'User', [world.location]);
    await createBlock(world, body({ LocationId: world.location }), scoped);
    await createBlock(world, body({ ResourceId: world.resource }), scoped);
    await createBlock(world, body({ ServiceId: world.service }), scoped);
    assertStatus(await call('POST', URL_, scoped, body({ LocationId: world.location2 })), 403, /outside your location access/);

    // A resource and a service linked only to location 2 are outside too.
    const farService = await world.tenant.service({ name: 'Far', duration: 30, locationIds: [world.location2] });
    const farResource = await world.tenant.resource({ name: 'Far', locationIds: [world.location2] });
    assertStatus(await call('POST', URL_, scoped, body({ ServiceId: farService })), 403, /outside your location access/);
    assertStatus(await call('POST', URL_, scoped, body({ ResourceId: farResource })), 403, /outside your location access/);

    const far = await createBlock(world, body({ LocationId: world.location2 }));
    await createBlock(world, body({ ResourceId: farResource }));
    assertStatus(await call('DELETE', `${URL_}/${far.id}`, scoped), 403, /outside your location access/);
    assert.equal((await list(world, '', scoped)).total, 3);
    assert.equal((await list(world)).total, 5);
  });

  test('a machine write token writes; a read token reads but may not write', async () => {
    const world = await newWorld(context);
    const writer = await machineHeaders(context, world);
    const reader = await machineHeaders(context, world, 'read');
    const block = await createBlock(world, body({ LocationId: world.location }), writer);
    assertStatus(await call('POST', URL_, reader, body({ LocationId: world.location })), 403, /Insufficient scope: write required/);
    assertStatus(await call('DELETE', `${URL_}/${block.id}`, reader), 403, /Insufficient scope/);
    assert.equal((await list(world, '', reader)).total, 1);
    assert.equal((await call('DELETE', `${URL_}/${block.id}`, writer)).statusCode, 204);
  });

  test('no credentials: 401', async () => {
    const response = await call('POST', URL_, {}, {});
    assert.equal(response.statusCode, 401, response.body);
    assert.equal(json(response).success, false);
  });
});
