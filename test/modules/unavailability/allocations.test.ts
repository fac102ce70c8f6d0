// Weekly and single allocations: POST /v3/weeklyAllocation/setWeeklyAllocations and
// /v3/singleAllocation/setSingleAllocations replace the whole set of exactly one scope (LocationId,
// and ServiceId and ResourceId or their absence); GET /v3/weeklyAllocation and /v3/singleAllocation
// list it (the specification, Allocations; docs/api.md, Unavailability). Codes: RESOURCEALLOCATION
// when ResourceId is given, else SERVICEALLOCATION.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertInvalid, assertNotOwned, assertStatus, caller, machineHeaders, member, newWorld, ok } from './fixtures.js';
import type { World } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());
const call = caller(() => context);

interface Allocation {
  id: string;
  companyId: string;
  locationId: string;
  serviceId: string | null;
  resourceId: string | null;
  day?: string;
  date?: string;
  start: string;
  end: string;
  bookingsPerSlot: number | null;
  legacyId: string | null;
  createdAt: string;
}

type Kind = 'weekly' | 'single';
const SET: Record<Kind, string> = { weekly: '/v3/weeklyAllocation/setWeeklyAllocations', single: '/v3/singleAllocation/setSingleAllocations' };
const GET: Record<Kind, string> = { weekly: '/v3/weeklyAllocation', single: '/v3/singleAllocation' };

const query = (ids: { LocationId?: string; ServiceId?: string; ResourceId?: string }) =>
  `?${new URLSearchParams(Object.entries(ids).filter(([, v]) => v !== undefined) as Array<[string, string]>).toString()}`;

async function set(kind: Kind, world: World, ids: Parameters<typeof query>[0], allocations: unknown[], headers = world.headers) {
  return ok<{ data: Allocation[] }>(await call('POST', `${SET[kind]}${query(ids)}`, headers, { allocations })).data;
}
async function get(kind: Kind, world: World, ids: Parameters<typeof query>[0], headers = world.headers) {
  return ok<{ data: Allocation[] }>(await call('GET', `${GET[kind]}${query(ids)}`, headers)).data;
}
const windows = (rows: Allocation[]) => rows.map((r) => `${r.day ?? r.date} ${r.start}-${r.end}`);

describe('POST /v3/weeklyAllocation/setWeeklyAllocations', () => {
  test('sets the weekly windows of a location, ordered by day and start, and GET lists them', async () => {
    const world = await newWorld(context);
    const data = await set('weekly', world, { LocationId: world.location }, [
      { day: 'wed', start: '13:00', end: '17:00' },
      { day: 'mon', start: '14:00', end: '24:00', legacyId: 'v1-9' },
      { day: 'mon', start: '09:00', end: '12:00' },
    ]);
    assert.deepEqual(windows(data), ['mon 09:00-12:00', 'mon 14:00-24:00', 'wed 13:00-17:00']);
    const first = data[0]!;
    assert.match(first.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      [first.companyId, first.locationId, first.serviceId, first.resourceId, first.bookingsPerSlot, first.legacyId],
      [world.tenant.companyId, world.location, null, null, null, null],
    );
    assert.equal(data[1]!.legacyId, 'v1-9');
    assert.deepEqual(await get('weekly', world, { LocationId: world.location }), data);
  });

  test('a second set replaces the first; an empty list clears it', async () => {
    const world = await newWorld(context);
    const before_ = await set('weekly', world, { LocationId: world.location }, [{ day: 'tue', start: '09:00', end: '17:00' }]);
    const after_ = await set('weekly', world, { LocationId: world.location }, [{ day: 'fri', start: '10:00', end: '11:00' }]);
    assert.deepEqual(windows(after_), ['fri 10:00-11:00']);
    assert.notEqual(after_[0]!.id, before_[0]!.id);
    assert.deepEqual(await get('weekly', world, { LocationId: world.location }), after_);
    assert.deepEqual(await set('weekly', world, { LocationId: world.location }, []), []);
    assert.deepEqual(await get('weekly', world, { LocationId: world.location }), []);
  });

  test('each scope is its own set: location, location+service, location+resource, location+service+resource', async () => {
    const world = await newWorld(context);
    const { location: L, service: S, resource: R } = world;
    const scopes = [{ LocationId: L }, { LocationId: L, ServiceId: S }, { LocationId: L, ResourceId: R }, { LocationId: L, ServiceId: S, ResourceId: R }];
    for (const [index, ids] of scopes.entries()) {
      const rows = await set('weekly', world, ids, [{ day: 'sun', start: `0${index}:00`, end: '09:00' }]);
      assert.deepEqual([rows[0]!.serviceId, rows[0]!.resourceId], [ids.ServiceId ?? null, ids.ResourceId ?? null]);
    }
    await set('weekly', world, { LocationId: L, ServiceId: S }, [{ day: 'sat', start: '10:00', end: '12:00' }]);
    assert.deepEqual(windows(await get('weekly', world, scopes[0]!)), ['sun 00:00-09:00']);
    assert.deepEqual(windows(await get('weekly', world, scopes[1]!)), ['sat 10:00-12:00']);
    assert.deepEqual(windows(await get('weekly', world, scopes[2]!)), ['sun 02:00-09:00']);
    assert.deepEqual(windows(await get('weekly', world, scopes[3]!)), ['sun 03:00-09:00']);
    assert.deepEqual(await get('weekly', world, { LocationId: world.location2 }), []);
  });

  test('bookingsPerSlot only when both ServiceId and ResourceId scope the set', async () => {
    const world = await newWorld(context);
    const { location: L, service: S, resource: R } = world;
    const rows = await set('weekly', world, { LocationId: L, ServiceId: S, ResourceId: R }, [
      { day: 'mon', start: '09:00', end: '12:00', bookingsPerSlot: 2 },
      { day: 'tue', start: '09:00', end: '12:00', bookingsPerSlot: null },
    ]);
    assert.deepEqual(rows.map((r) => r.bookingsPerSlot), [2, null]);
    for (const ids of [{ LocationId: L }, { LocationId: L, ServiceId: S }, { LocationId: L, ResourceId: R }]) {
      const response = await call('POST', `${SET.weekly}${query(ids)}`, world.headers, {
        allocations: [
          { day: 'mon', start: '09:00', end: '12:00' },
          { day: 'tue', start: '09:00', end: '12:00', bookingsPerSlot: 3 },
        ],
      });
      const body = assertInvalid(response, [{ path: 'allocations.1.bookingsPerSlot' }]);
      assert.match(body.errors[0]!.msg, /only when both ServiceId and ResourceId/);
    }
    for (const bookingsPerSlot of [0, 1.5, '2']) {
      assertInvalid(await call('POST', `${SET.weekly}${query({ LocationId: L, ServiceId: S, ResourceId: R })}`, world.headers, {
        allocations: [{ day: 'mon', start: '09:00', end: '12:00', bookingsPerSlot }],
      }), [{ path: 'allocations.0.bookingsPerSlot' }]);
    }
  });

  test('every item rule, with RESOURCEALLOCATION codes when ResourceId is given and SERVICEALLOCATION otherwise', async () => {
    const world = await newWorld(context);
    const cases = [
      { family: 'SERVICEALLOCATION', ids: { LocationId: world.location, ServiceId: world.service } },
      { family: 'SERVICEALLOCATION', ids: { LocationId: world.location } },
      { family: 'RESOURCEALLOCATION', ids: { LocationId: world.location, ResourceId: world.resource } },
    ];
    for (const { family, ids } of cases) {
      const send = (allocations: unknown[]) => call('POST', `${SET.weekly}${query(ids)}`, world.headers, { allocations });
      assertInvalid(await send([{ day: 'mon', end: '12:00' }]), [{ path: 'allocations.0.start', code: `${family}-REQUIRED-102` }]);
      assertInvalid(await send([{ day: 'mon', start: '09:00' }]), [{ path: 'allocations.0.end', code: `${family}-REQUIRED-103` }]);
      assertInvalid(await send([{ day: 'mon', start: '12:00', end: '09:00' }]), [{ path: 'allocations.0.end', code: `${family}-TIME-100` }]);
      assertInvalid(await send([{ day: 'mon', start: '09:00', end: '09:00' }]), [{ path: 'allocations.0.end', code: `${family}-TIME-101` }]);
      assertInvalid(await send([{ day: 'mon', start: '9:00', end: '12:00' }]), [{ path: 'allocations.0.start', code: 'INVALIDTIME-100' }]);
      assertInvalid(await send([{ day: 'mon', start: '24:00', end: '24:00' }]), [{ path: 'allocations.0.start', code: 'INVALIDTIME-100' }]);
      assertInvalid(await send([{ day: 'mon', start: '09:00', end: '24:30' }]), [{ path: 'allocations.0.end', code: 'INVALIDTIME-100' }]);
    }
    const send = (allocations: unknown[]) => call('POST', `${SET.weekly}${query({ LocationId: world.location })}`, world.headers, { allocations });
    for (const day of ['monday', 'Mon']) assertInvalid(await send([{ day, start: '09:00', end: '12:00' }]), [{ path: 'allocations.0.day' }]);
    assertInvalid(await send([{ day: 1, start: '09:00', end: '12:00' }]), [{ path: 'allocations.0.day' }, { path: 'allocations.0.day' }]);
    assertInvalid(await send([{ start: '09:00', end: '12:00' }]), [{ path: 'allocations.0.day' }]);
    assertInvalid(await send([
      { day: 'mon', start: '09:00', end: '12:00' },
      { day: 'tue', start: '11:00', end: '13:00' },
      { day: 'mon', start: '11:30', end: '13:00' },
    ]), [{ path: 'allocations.2.start' }]);
    // No weekly booking quota fields.
    assertInvalid(await send([{ day: 'mon', start: '09:00', end: '12:00', weeklyBookingLimit: 5 }]), [{ path: 'allocations.0.weeklyBookingLimit' }]);
    assertInvalid(await call('POST', `${SET.weekly}${query({ LocationId: world.location })}`, world.headers, { allocations: [], weeklyBookingLimit: 5 }), [
      { path: 'weeklyBookingLimit' },
    ]);
    assertInvalid(await call('POST', `${SET.weekly}${query({ LocationId: world.location })}`, world.headers, {}), [{ path: 'allocations' }]);
    // Touching windows do not overlap.
    assert.equal((await set('weekly', world, { LocationId: world.location }, [
      { day: 'mon', start: '09:00', end: '12:00' },
      { day: 'mon', start: '12:00', end: '13:00' },
    ])).length, 2);
  });

  test('LocationId is required in the query', async () => {
    const world = await newWorld(context);
    for (const url of [SET.weekly, `${SET.weekly}?ServiceId=${world.service}`]) {
      assertInvalid(await call('POST', url, world.headers, { allocations: [] }), [{ path: 'LocationId', location: 'query' }]);
    }
    assertInvalid(await call('GET', GET.weekly, world.headers), [{ path: 'LocationId', location: 'query' }]);
    assertInvalid(await call('GET', `${GET.weekly}?LocationId=abc`, world.headers), [{ path: 'LocationId', location: 'query' }]);
  });
});

describe('POST /v3/singleAllocation/setSingleAllocations', () => {
  test('sets dated windows ordered by date and start; a second set replaces the first', async () => {
    const world = await newWorld(context);
    const ids = { LocationId: world.location, ServiceId: world.service, ResourceId: world.resource };
    const data = await set('single', world, ids, [
      { date: '2030-06-02', start: '09:00', end: '12:00', bookingsPerSlot: 4, legacyId: 'v1-3' },
      { date: '2030-06-01', start: '13:00', end: '24:00' },
      // A date in the past is kept as sent.
      { date: '2020-01-01', start: '09:00', end: '10:00' },
    ]);
    assert.deepEqual(windows(data), ['2020-01-01 09:00-10:00', '2030-06-01 13:00-24:00', '2030-06-02 09:00-12:00']);
    assert.deepEqual([data[2]!.bookingsPerSlot, data[2]!.legacyId, data[2]!.serviceId, data[2]!.resourceId], [4, 'v1-3', world.service, world.resource]);
    assert.deepEqual(await get('single', world, ids), data);
    const replaced = await set('single', world, ids, [{ date: '2030-07-01', start: '08:00', end: '09:00' }]);
    assert.deepEqual(await get('single', world, ids), replaced);
    // The weekly set of the same scope is a different set.
    assert.deepEqual(await get('weekly', world, ids), []);
  });

  test('item rules: date required (REQUIRED-100), times, overlaps on one date, bookingsPerSlot only for a pair', async () => {
    const world = await newWorld(context);
    for (const [family, ids] of [
      ['SERVICEALLOCATION', { LocationId: world.location, ServiceId: world.service }],
      ['RESOURCEALLOCATION', { LocationId: world.location, ResourceId: world.resource }],
    ] as const) {
      const send = (allocations: unknown[]) => call('POST', `${SET.single}${query(ids)}`, world.headers, { allocations });
      assertInvalid(await send([{ start: '09:00', end: '12:00' }]), [{ path: 'allocations.0.date', code: `${family}-REQUIRED-100` }]);
      for (const date of ['2030-02-30', '0000-06-01', '3000-06-01']) assertInvalid(await send([{ date, start: '09:00', end: '12:00' }]), [{ path: 'allocations.0.date' }]);
      assertInvalid(await send([{ date: '2030-06-01', start: '10:00', end: '10:00' }]), [{ path: 'allocations.0.end', code: `${family}-TIME-101` }]);
      assertInvalid(await send([{ date: '2030-06-01', start: '11:00', end: '10:00' }]), [{ path: 'allocations.0.end', code: `${family}-TIME-100` }]);
      assertInvalid(await send([
        { date: '2030-06-01', start: '09:00', end: '12:00' },
        { date: '2030-06-01', start: '08:00', end: '09:30' },
      ]), [{ path: 'allocations.0.start' }]);
      assertInvalid(await send([{ date: '2030-06-01', start: '09:00', end: '12:00', bookingsPerSlot: 2 }]), [{ path: 'allocations.0.bookingsPerSlot' }]);
    }
    // The same times on different dates are fine.
    assert.equal((await set('single', world, { LocationId: world.location }, [
      { date: '2030-06-01', start: '09:00', end: '12:00' },
      { date: '2030-06-02', start: '09:00', end: '12:00' },
    ])).length, 2);
  });
});

describe('a refused replace leaves the old set intact', () => {
  for (const kind of ['weekly', 'single'] as const) {
    test(`${kind}: schema, rule and scope failures change nothing`, async () => {
      const world = await newWorld(context);
      const scoped = await member(context, world, 'User', [world.location2]);
      const ids = { LocationId: world.location, ServiceId: world.service, ResourceId: world.resource };
      const item = (start: string, end: string, extra: Record<string, unknown> = {}) =>
        kind === 'weekly' ? { day: 'thu', start, end, ...extra } : { date: '2030-09-04', start, end, ...extra };
      const original = await set(kind, world, ids, [item('09:00', '12:00'), item('13:00', '17:00', { bookingsPerSlot: 2 })]);

      const attempts = [
        call('POST', `${SET[kind]}${query(ids)}`, world.headers, { allocations: [item('08:00', '09:00'), item('10:00', '25:00')] }),
        call('POST', `${SET[kind]}${query(ids)}`, world.headers, { allocations: [item('08:00', '09:00'), item('10:00', '09:00')] }),
        call('POST', `${SET[kind]}${query(ids)}`, world.headers, { allocations: [item('08:00', '10:00'), item('09:00', '11:00')] }),
        call('POST', `${SET[kind]}${query(ids)}`, world.headers, { allocations: [item('08:00', '09:00'), item('10:00', '11:00', { legacyId: 'x'.repeat(101) })] }),
        call('POST', `${SET[kind]}${query(ids)}`, scoped, { allocations: [] }),
      ];
      const statuses = (await Promise.all(attempts)).map((r) => r.statusCode);
      assert.deepEqual(statuses, [400, 400, 400, 400, 403]);
      assert.deepEqual(await get(kind, world, ids), original);
    });
  }
});

describe('tenant isolation', () => {
  test('another company\'s LocationId, ServiceId or ResourceId in the query is 400 naming it, on set and list', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    await set('weekly', theirs, { LocationId: theirs.location }, [{ day: 'mon', start: '09:00', end: '17:00' }]);
    const machine = await machineHeaders(context, mine);
    for (const headers of [mine.headers, machine]) {
      for (const kind of ['weekly', 'single'] as const) {
        for (const [key, ids] of [
          ['LocationId', { LocationId: theirs.location }],
          ['ServiceId', { LocationId: mine.location, ServiceId: theirs.service }],
          ['ResourceId', { LocationId: mine.location, ResourceId: theirs.resource }],
          ['ResourceId', { LocationId: mine.location, ResourceId: randomUUID() }],
        ] as const) {
          const id = (ids as Record<string, string>)[key]!;
          assertNotOwned(await call('POST', `${SET[kind]}${query(ids)}`, headers, { allocations: [] }), id, key, 'query');
          assertNotOwned(await call('GET', `${GET[kind]}${query(ids)}`, headers), id, key, 'query');
        }
      }
    }
    assert.equal((await get('weekly', theirs, { LocationId: theirs.location })).length, 1);
  });
});

describe('roles, location scope and machine tokens', () => {
  test('Resource role 403; a location-scoped user writes and reads only their locations', async () => {
    const world = await newWorld(context);
    const resourceUser = await member(context, world, 'Resource');
    const scoped = await member(context, world, 'User', [world.location]);
    const user = await member(context, world, 'User');
    const far = await set('weekly', world, { LocationId: world.location2 }, [{ day: 'mon', start: '09:00', end: '17:00' }], user);

    for (const kind of ['weekly', 'single'] as const) {
      assertStatus(await call('POST', `${SET[kind]}${query({ LocationId: world.location })}`, resourceUser, { allocations: [] }), 403, /Insufficient role/);
      assertStatus(await call('POST', `${SET[kind]}${query({ LocationId: world.location2 })}`, scoped, { allocations: [] }), 403, /outside your location access/);
    }
    await set('weekly', world, { LocationId: world.location, ServiceId: world.service }, [{ day: 'tue', start: '09:00', end: '10:00' }], scoped);
    // Lists outside the caller's locations are empty, as other lists are filtered silently.
    assert.deepEqual(await get('weekly', world, { LocationId: world.location2 }, scoped), []);
    assert.deepEqual(await get('weekly', world, { LocationId: world.location2 }, resourceUser), []);
    assert.deepEqual(await get('weekly', world, { LocationId: world.location2 }), far);
    assert.equal((await get('weekly', world, { LocationId: world.location, ServiceId: world.service }, resourceUser)).length, 1);
  });

  test('a machine write token replaces; a read token lists only', async () => {
    const world = await newWorld(context);
    const writer = await machineHeaders(context, world);
    const reader = await machineHeaders(context, world, 'read');
    const rows = await set('single', world, { LocationId: world.location }, [{ date: '2030-06-01', start: '09:00', end: '10:00' }], writer);
    assertStatus(await call('POST', `${SET.single}${query({ LocationId: world.location })}`, reader, { allocations: [] }), 403, /Insufficient scope/);
    assert.deepEqual(await get('single', world, { LocationId: world.location }, reader), rows);
  });
});
