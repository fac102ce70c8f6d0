// Recurring blocks: POST, GET, PATCH (and PUT), DELETE /v3/unavailability/recurringBlock[/:id]
// (the specification, Recurring block; docs/api.md, Unavailability). REPEAT-* codes for the rule,
// the scope's block family (CALENDARBLOCK, RESOURCEBLOCK, SERVICEBLOCK) for dates and times.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertInvalid, assertNotOwned, assertStatus, caller, created, machineHeaders, member, newWorld, ok, scopes } from './fixtures.js';
import type { World } from './fixtures.js';
import { createUnavailabilityRepository } from '../../../src/modules/unavailability/repository.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());
const call = caller(() => context);

interface Rule {
  id: string;
  companyId: string;
  name: string;
  frequency: string;
  interval: number;
  startDate: string;
  endDate: string | null;
  startTime: string;
  endTime: string;
  iana: string;
  weekdays: number[];
  dayOfMonth: number | null;
  locationId: string | null;
  resourceId: string | null;
  serviceId: string | null;
  legacyId: string | null;
  createdAt: string;
  updatedAt: string;
}
interface RulePage {
  data: Rule[];
  page: number;
  limit: number;
  total: number;
}

const URL_ = '/v3/unavailability/recurringBlock';
const daily = (scope: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  ...scope,
  name: 'Lunch',
  frequency: 'DAILY',
  startDate: '2030-01-01',
  startTime: '12:00',
  endTime: '13:00',
  iana: 'Europe/London',
  ...extra,
});

async function createRule(world: World, payload: Record<string, unknown>, headers = world.headers) {
  return created<Rule>(await call('POST', URL_, headers, payload));
}
async function read(world: World, id: string, headers = world.headers) {
  return ok<Rule>(await call('GET', `${URL_}/${id}`, headers));
}
async function list(world: World, query = '', headers = world.headers) {
  return ok<RulePage>(await call('GET', `${URL_}${query}`, headers));
}

describe('POST /v3/unavailability/recurringBlock', () => {
  test('creates a weekly rule with every field', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, {
      ResourceId: world.resource,
      name: 'Team meeting',
      frequency: 'WEEKLY',
      interval: 2,
      startDate: '2030-01-06',
      endDate: '2030-06-30',
      startTime: '09:30',
      endTime: '10:15',
      iana: 'Asia/Kolkata',
      weekdays: [5, 1],
      legacyId: 'v1-block-77',
    });
    assert.match(rule.id, /^[0-9a-f-]{36}$/);
    assert.equal(rule.companyId, world.tenant.companyId);
    assert.deepEqual(
      { ...rule, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        companyId: world.tenant.companyId,
        name: 'Team meeting',
        frequency: 'WEEKLY',
        interval: 2,
        startDate: '2030-01-06',
        endDate: '2030-06-30',
        startTime: '09:30',
        endTime: '10:15',
        iana: 'Asia/Kolkata',
        weekdays: [1, 5],
        dayOfMonth: null,
        locationId: null,
        resourceId: world.resource,
        serviceId: null,
        legacyId: 'v1-block-77',
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.deepEqual(await read(world, rule.id), rule);
    assert.deepEqual((await list(world)).data, [rule]);
  });

  test('defaults: interval 1, no end date, no weekdays, the start date\'s day of month', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ LocationId: world.location }));
    assert.deepEqual([rule.interval, rule.endDate, rule.weekdays, rule.dayOfMonth, rule.legacyId], [1, null, [], null, null]);
    const monthly = await createRule(world, daily({ ServiceId: world.service }, { frequency: 'MONTHLY', dayOfMonth: 31, interval: 12 }));
    assert.deepEqual([monthly.frequency, monthly.dayOfMonth, monthly.interval, monthly.serviceId], ['MONTHLY', 31, 12, world.service]);
    const yearly = await createRule(world, daily({ LocationId: world.location }, { frequency: 'YEARLY', interval: 5 }));
    assert.equal(yearly.frequency, 'YEARLY');
    const biweekly = await createRule(world, daily({ LocationId: world.location }, { frequency: 'BIWEEKLY', weekdays: [0, 6], interval: 52 }));
    assert.deepEqual(biweekly.weekdays, [0, 6]);
  });

  test('frequency is one of DAILY, WEEKLY, BIWEEKLY, MONTHLY, YEARLY (REPEAT-101)', async () => {
    const world = await newWorld(context);
    for (const frequency of ['D', 'daily', 'HOURLY']) {
      assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { frequency })), [{ path: 'frequency', code: 'REPEAT-101' }]);
    }
    // Not a string: the type and the value are both wrong.
    assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { frequency: 3 })), [
      { path: 'frequency', code: 'REPEAT-101' },
      { path: 'frequency', code: 'REPEAT-101' },
    ]);
    const { frequency: _f, ...withoutFrequency } = daily({ LocationId: world.location });
    assertInvalid(await call('POST', URL_, world.headers, withoutFrequency), [{ path: 'frequency' }]);
  });

  test('interval ranges per frequency: REPEAT-102 to REPEAT-105', async () => {
    const world = await newWorld(context);
    const cases = [
      { frequency: 'DAILY', max: 365, code: 'REPEAT-102' },
      { frequency: 'WEEKLY', max: 52, code: 'REPEAT-103' },
      { frequency: 'BIWEEKLY', max: 52, code: 'REPEAT-103' },
      { frequency: 'MONTHLY', max: 12, code: 'REPEAT-104' },
      { frequency: 'YEARLY', max: 5, code: 'REPEAT-105' },
    ];
    for (const { frequency, max, code } of cases) {
      const extra = { frequency, ...(frequency.includes('WEEKLY') ? { weekdays: [1] } : {}) };
      for (const interval of [0, -1, max + 1]) {
        assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { ...extra, interval })), [{ path: 'interval', code }]);
      }
      assert.equal((await createRule(world, daily({ LocationId: world.location }, { ...extra, interval: max }))).interval, max);
    }
    assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { interval: 1.5 })), [{ path: 'interval' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { interval: '2' })), [{ path: 'interval' }]);
  });

  test('weekdays: required for WEEKLY and BIWEEKLY (REPEAT-106), 0 to 6 (REPEAT-107), only for those', async () => {
    const world = await newWorld(context);
    const scope = { LocationId: world.location };
    for (const frequency of ['WEEKLY', 'BIWEEKLY']) {
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency })), [{ path: 'weekdays', code: 'REPEAT-106' }]);
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency, weekdays: [] })), [{ path: 'weekdays', code: 'REPEAT-106' }]);
    }
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'WEEKLY', weekdays: [1, 7] })), [{ path: 'weekdays.1', code: 'REPEAT-107' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'WEEKLY', weekdays: [-1] })), [{ path: 'weekdays.0', code: 'REPEAT-107' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'WEEKLY', weekdays: ['mon'] })), [{ path: 'weekdays.0', code: 'REPEAT-107' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'WEEKLY', weekdays: [2, 2] })), [{ path: 'weekdays' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { weekdays: [1] })), [{ path: 'weekdays' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'MONTHLY', weekdays: [1] })), [{ path: 'weekdays' }]);
  });

  test('dayOfMonth: 1 to 31, MONTHLY only', async () => {
    const world = await newWorld(context);
    const scope = { LocationId: world.location };
    for (const dayOfMonth of [0, 32]) {
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'MONTHLY', dayOfMonth })), [{ path: 'dayOfMonth' }]);
    }
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { frequency: 'WEEKLY', weekdays: [1], dayOfMonth: 3 })), [{ path: 'dayOfMonth' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily(scope, { dayOfMonth: 3 })), [{ path: 'dayOfMonth' }]);
  });

  test('dates: startDate required, YYYY-MM-DD, endDate on or after it, with the family\'s codes', async () => {
    const world = await newWorld(context);
    const endCodes = { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-103', SERVICEBLOCK: 'SERVICEBLOCK-106' };
    for (const { family, scope } of scopes(world)) {
      const { startDate: _s, ...withoutStart } = daily(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutStart), [{ path: 'startDate', code: `${family}-REQUIRED-100` }]);
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { endDate: '2029-12-31' })), [{ path: 'endDate', code: endCodes[family] }]);
      assert.equal((await createRule(world, daily(scope, { endDate: '2030-01-01' }))).endDate, '2030-01-01');
    }
    for (const startDate of ['2030-1-1', '2030-02-30', '0000-01-01', '3000-01-01']) {
      assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { startDate })), [{ path: 'startDate' }]);
    }
    // Not a date at all: both the format and the range entries name the field.
    assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { startDate: '01/01/2030' })), [
      { path: 'startDate' },
      { path: 'startDate' },
    ]);
    assertInvalid(await call('POST', URL_, world.headers, daily({ LocationId: world.location }, { endDate: '2030-02-30' })), [{ path: 'endDate' }]);
  });

  test('times: HH:MM (INVALIDTIME-100), "24:00" only as an end, equal times refused, an earlier end is overnight', async () => {
    const world = await newWorld(context);
    for (const { family, scope } of scopes(world)) {
      const { startTime: _s, ...withoutStart } = daily(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutStart), [{ path: 'startTime', code: `${family}-REQUIRED-102` }]);
      const { endTime: _e, ...withoutEnd } = daily(scope);
      assertInvalid(await call('POST', URL_, world.headers, withoutEnd), [{ path: 'endTime', code: `${family}-REQUIRED-103` }]);
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { startTime: '10:00', endTime: '10:00' })), [{ path: 'endTime', code: `${family}-TIME-101` }]);
    }
    const scope = { LocationId: world.location };
    for (const startTime of ['9:00', '24:00', '12:60', '0900', '']) {
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { startTime })), [{ path: 'startTime', code: 'INVALIDTIME-100' }]);
    }
    for (const endTime of ['24:01', '25:00', '7']) {
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { endTime })), [{ path: 'endTime', code: 'INVALIDTIME-100' }]);
    }
    const overnight = await createRule(world, daily(scope, { startTime: '22:00', endTime: '06:00' }));
    assert.deepEqual([overnight.startTime, overnight.endTime], ['22:00', '06:00']);
    const wholeDay = await createRule(world, daily(scope, { startTime: '00:00', endTime: '24:00' }));
    assert.equal(wholeDay.endTime, '24:00');
  });

  test('iana must be an IANA time zone; name 1 to 100 characters', async () => {
    const world = await newWorld(context);
    const scope = { LocationId: world.location };
    for (const iana of ['Mars/Olympus', 'GMT+25', '']) {
      assertInvalid(await call('POST', URL_, world.headers, daily(scope, { iana })), [{ path: 'iana' }]);
    }
    const { iana: _i, ...withoutZone } = daily(scope);
    assertInvalid(await call('POST', URL_, world.headers, withoutZone), [{ path: 'iana' }]);
    for (const name of ['', 'n'.repeat(101)]) assertInvalid(await call('POST', URL_, world.headers, daily(scope, { name })), [{ path: 'name' }]);
    const { name: _n, ...withoutName } = daily(scope);
    assertInvalid(await call('POST', URL_, world.headers, withoutName), [{ path: 'name' }]);
  });

  test('exactly one scope id', async () => {
    const world = await newWorld(context);
    assertInvalid(await call('POST', URL_, world.headers, daily({})), [{ path: 'LocationId' }]);
    assertInvalid(await call('POST', URL_, world.headers, daily({ ServiceId: world.service, LocationId: world.location })), [{ path: 'ServiceId' }]);
    assert.equal((await list(world)).total, 0);
  });
});

describe('GET /v3/unavailability/recurringBlock', () => {
  test('lists by start date, filtered by scope id', async () => {
    const world = await newWorld(context);
    const a = await createRule(world, daily({ LocationId: world.location }, { startDate: '2030-03-01' }));
    const b = await createRule(world, daily({ ResourceId: world.resource }, { startDate: '2030-01-01' }));
    const c = await createRule(world, daily({ ServiceId: world.service }, { startDate: '2030-02-01' }));
    const page = await list(world);
    assert.deepEqual(page.data.map((r) => r.id), [b.id, c.id, a.id]);
    assert.deepEqual([page.page, page.limit, page.total], [1, 20, 3]);
    assert.deepEqual((await list(world, '?limit=2&page=2')).data.map((r) => r.id), [a.id]);
    assert.deepEqual((await list(world, `?ResourceId=${world.resource}`)).data.map((r) => r.id), [b.id]);
    assert.deepEqual((await list(world, `?ServiceId=${world.service}&LocationId=${world.location}`)).data.map((r) => r.id), [c.id, a.id]);
    assert.equal((await list(world, `?LocationId=${world.location2}`)).total, 0);
  });
});

describe('PATCH and PUT /v3/unavailability/recurringBlock/:id', () => {
  test('changes the fields given and keeps the rest', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ LocationId: world.location }, { endDate: '2030-12-31', legacyId: 'v1-1' }));
    const patched = ok<Rule>(await call('PATCH', `${URL_}/${rule.id}`, world.headers, { name: 'Long lunch', endTime: '13:30' }));
    assert.deepEqual({ ...patched, updatedAt: undefined }, { ...rule, name: 'Long lunch', endTime: '13:30', updatedAt: undefined });
    assert.ok(patched.updatedAt >= rule.updatedAt);
    const put = ok<Rule>(await call('PUT', `${URL_}/${rule.id}`, world.headers, { endDate: null, legacyId: null, iana: 'America/New_York' }));
    assert.deepEqual([put.name, put.endDate, put.legacyId, put.iana], ['Long lunch', null, null, 'America/New_York']);
    assert.deepEqual(await read(world, rule.id), put);
    // An empty change is a valid no-op.
    assert.equal(ok<Rule>(await call('PATCH', `${URL_}/${rule.id}`, world.headers, {})).name, 'Long lunch');
  });

  test('the merged rule is validated; a refused change leaves the rule as it was', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ ResourceId: world.resource }, { frequency: 'MONTHLY', interval: 6, startDate: '2030-05-01' }));
    const patch = (payload: Record<string, unknown>) => call('PATCH', `${URL_}/${rule.id}`, world.headers, payload);

    assertInvalid(await patch({ frequency: 'WEEKLY' }), [{ path: 'weekdays', code: 'REPEAT-106' }]);
    assertInvalid(await patch({ frequency: 'YEARLY' }), [{ path: 'interval', code: 'REPEAT-105' }]);
    assertInvalid(await patch({ interval: 13 }), [{ path: 'interval', code: 'REPEAT-104' }]);
    assertInvalid(await patch({ endDate: '2030-04-30' }), [{ path: 'endDate', code: 'RESOURCEBLOCK-103' }]);
    assertInvalid(await patch({ startDate: '2031-01-01', endDate: '2030-12-31' }), [{ path: 'endDate', code: 'RESOURCEBLOCK-103' }]);
    assertInvalid(await patch({ endTime: '12:00' }), [{ path: 'endTime', code: 'RESOURCEBLOCK-TIME-101' }]);
    assertInvalid(await patch({ weekdays: [1] }), [{ path: 'weekdays' }]);
    assertInvalid(await patch({ startTime: '24:00' }), [{ path: 'startTime', code: 'INVALIDTIME-100' }]);
    assertInvalid(await patch({ frequency: 'X' }), [{ path: 'frequency', code: 'REPEAT-101' }]);
    assertInvalid(await patch({ name: null }), [{ path: 'name' }]);
    assertInvalid(await patch({ colour: 'red' }), [{ path: 'colour' }]);
    assert.deepEqual(await read(world, rule.id), rule);

    // Valid when the body supplies what the merged rule needs.
    const weekly = ok<Rule>(await patch({ frequency: 'WEEKLY', weekdays: [3], interval: 52 }));
    assert.deepEqual([weekly.frequency, weekly.weekdays, weekly.interval], ['WEEKLY', [3], 52]);
  });

  test('a change of frequency drops the weekdays or day of month the new one has no use for', async () => {
    const world = await newWorld(context);
    const weekly = await createRule(world, daily({ LocationId: world.location }, { frequency: 'WEEKLY', weekdays: [1, 3] }));
    const toDaily = ok<Rule>(await call('PATCH', `${URL_}/${weekly.id}`, world.headers, { frequency: 'DAILY' }));
    assert.deepEqual([toDaily.frequency, toDaily.weekdays], ['DAILY', []]);
    const monthly = await createRule(world, daily({ LocationId: world.location }, { frequency: 'MONTHLY', dayOfMonth: 15 }));
    const toYearly = ok<Rule>(await call('PATCH', `${URL_}/${monthly.id}`, world.headers, { frequency: 'YEARLY' }));
    assert.deepEqual([toYearly.frequency, toYearly.dayOfMonth], ['YEARLY', null]);
    // Explicitly given, they are still refused.
    assertInvalid(await call('PATCH', `${URL_}/${monthly.id}`, world.headers, { frequency: 'DAILY', dayOfMonth: 3 }), [{ path: 'dayOfMonth' }]);
  });

  test('a scope id moves the rule; codes follow the new scope', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ LocationId: world.location }));
    const moved = ok<Rule>(await call('PATCH', `${URL_}/${rule.id}`, world.headers, { ServiceId: world.service }));
    assert.deepEqual([moved.locationId, moved.resourceId, moved.serviceId], [null, null, world.service]);
    assertInvalid(await call('PATCH', `${URL_}/${rule.id}`, world.headers, { endDate: '2029-01-01' }), [{ path: 'endDate', code: 'SERVICEBLOCK-106' }]);
    assertInvalid(await call('PATCH', `${URL_}/${rule.id}`, world.headers, { ResourceId: world.resource, endDate: '2029-01-01' }), [
      { path: 'endDate', code: 'RESOURCEBLOCK-103' },
    ]);
    assertInvalid(await call('PATCH', `${URL_}/${rule.id}`, world.headers, { ResourceId: world.resource, LocationId: world.location }), [{ path: 'ResourceId' }]);
    assert.equal((await read(world, rule.id)).serviceId, world.service);
  });

  test('unknown id: 404', async () => {
    const world = await newWorld(context);
    assertStatus(await call('PATCH', `${URL_}/${randomUUID()}`, world.headers, { name: 'x' }), 404);
    assertStatus(await call('GET', `${URL_}/${randomUUID()}`, world.headers), 404);
  });
});

describe('DELETE /v3/unavailability/recurringBlock/:id', () => {
  test('deletes: 204, then reads and deletes are 404', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ LocationId: world.location }));
    const response = await call('DELETE', `${URL_}/${rule.id}`, world.headers);
    assert.equal(response.statusCode, 204, response.body);
    assertStatus(await call('GET', `${URL_}/${rule.id}`, world.headers), 404);
    assertStatus(await call('DELETE', `${URL_}/${rule.id}`, world.headers), 404);
    assert.equal((await list(world)).total, 0);
  });

  test('a delete checked against one scope does not remove the rule once it moved to another', async () => {
    const world = await newWorld(context);
    const rule = await createRule(world, daily({ LocationId: world.location }));
    const repository = createUnavailabilityRepository(context.database.db);
    // The caller's access was checked while the rule was at location2; it has moved since.
    const checked = { locationId: world.location2, resourceId: null, serviceId: null };
    assert.equal(await repository.deleteRecurring(world.tenant.companyId, rule.id, checked), undefined);
    assert.equal((await call('GET', `${URL_}/${rule.id}`, world.headers)).statusCode, 200);
  });
});

describe('tenant isolation', () => {
  test('another company\'s rule in the path is 404 for every method, and stays unchanged', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    const rule = await createRule(theirs, daily({ LocationId: theirs.location }));
    for (const headers of [mine.headers, await machineHeaders(context, mine)]) {
      assertStatus(await call('GET', `${URL_}/${rule.id}`, headers), 404);
      assertStatus(await call('PATCH', `${URL_}/${rule.id}`, headers, { name: 'Hijacked' }), 404);
      assertStatus(await call('PUT', `${URL_}/${rule.id}`, headers, { name: 'Hijacked' }), 404);
      assertStatus(await call('DELETE', `${URL_}/${rule.id}`, headers), 404);
    }
    assert.deepEqual(await read(theirs, rule.id), rule);
    assert.equal((await list(mine)).total, 0);
  });

  test('another company\'s scope id in a body or filter is 400 naming it', async () => {
    const [mine, theirs] = await Promise.all([newWorld(context), newWorld(context)]);
    const own = await createRule(mine, daily({ LocationId: mine.location }));
    for (const [key, id] of [
      ['LocationId', theirs.location],
      ['ResourceId', theirs.resource],
      ['ServiceId', theirs.service],
      ['ServiceId', randomUUID()],
    ] as const) {
      assertNotOwned(await call('POST', URL_, mine.headers, daily({ [key]: id })), id, key, 'body');
      assertNotOwned(await call('PATCH', `${URL_}/${own.id}`, mine.headers, { [key]: id }), id, key, 'body');
      assertNotOwned(await call('GET', `${URL_}?${key}=${id}`, mine.headers), id, key, 'query');
    }
    assert.deepEqual(await read(mine, own.id), own);
    assert.equal((await list(theirs)).total, 0);
  });
});

describe('roles, location scope and machine tokens', () => {
  test('a Resource-role user may not write (403) and reads only rules it can see', async () => {
    const world = await newWorld(context);
    const resourceUser = await member(context, world, 'Resource');
    const own = await createRule(world, daily({ ResourceId: world.resource }));
    const far = await createRule(world, daily({ LocationId: world.location2 }));
    assertStatus(await call('POST', URL_, resourceUser, daily({ ResourceId: world.resource })), 403, /Insufficient role/);
    assertStatus(await call('PATCH', `${URL_}/${own.id}`, resourceUser, { name: 'Mine' }), 403, /Insufficient role/);
    assertStatus(await call('PUT', `${URL_}/${own.id}`, resourceUser, { name: 'Mine' }), 403, /Insufficient role/);
    assertStatus(await call('DELETE', `${URL_}/${own.id}`, resourceUser), 403, /Insufficient role/);
    assert.deepEqual(await read(world, own.id, resourceUser), own);
    assertStatus(await call('GET', `${URL_}/${far.id}`, resourceUser), 403, /outside your location access/);
    assert.deepEqual((await list(world, '', resourceUser)).data.map((r) => r.id), [own.id]);
  });

  test('Admin and User write; a location-scoped user only inside their locations', async () => {
    const world = await newWorld(context);
    const admin = await member(context, world, 'Admin');
    const scoped = await member(context, world, 'User', [world.location]);
    const byAdmin = await createRule(world, daily({ LocationId: world.location2 }), admin);
    const byScoped = await createRule(world, daily({ ServiceId: world.service }), scoped);

    assertStatus(await call('POST', URL_, scoped, daily({ LocationId: world.location2 })), 403, /outside your location access/);
    assertStatus(await call('PATCH', `${URL_}/${byAdmin.id}`, scoped, { name: 'x' }), 403, /outside your location access/);
    assertStatus(await call('DELETE', `${URL_}/${byAdmin.id}`, scoped), 403, /outside your location access/);
    assertStatus(await call('GET', `${URL_}/${byAdmin.id}`, scoped), 403, /outside your location access/);
    // Moving an own rule out of scope is refused too, and leaves it where it was.
    assertStatus(await call('PATCH', `${URL_}/${byScoped.id}`, scoped, { LocationId: world.location2 }), 403, /outside your location access/);
    assert.deepEqual(await read(world, byScoped.id), byScoped);
    assert.deepEqual((await list(world, '', scoped)).data.map((r) => r.id), [byScoped.id]);
    assert.equal(ok<Rule>(await call('PATCH', `${URL_}/${byScoped.id}`, scoped, { name: 'Renamed' })).name, 'Renamed');
    assert.equal((await call('DELETE', `${URL_}/${byAdmin.id}`, admin)).statusCode, 204);
  });

  test('a machine write token writes; a read token reads only', async () => {
    const world = await newWorld(context);
    const writer = await machineHeaders(context, world);
    const reader = await machineHeaders(context, world, 'read');
    const rule = await createRule(world, daily({ LocationId: world.location }), writer);
    assertStatus(await call('POST', URL_, reader, daily({ LocationId: world.location })), 403, /Insufficient scope/);
    assertStatus(await call('PATCH', `${URL_}/${rule.id}`, reader, { name: 'x' }), 403, /Insufficient scope/);
    assert.deepEqual(await read(world, rule.id, reader), rule);
    assert.equal(ok<Rule>(await call('PATCH', `${URL_}/${rule.id}`, writer, { name: 'Robot' })).name, 'Robot');
  });
});
