import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Kind = 'location' | 'service' | 'resource' | 'customer';

interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}
interface ErrorBody {
  success: boolean;
  message: string;
  errors: FieldError[];
  code?: string;
}
interface Expected {
  path: string;
  code?: string;
  location?: 'body' | 'query' | 'params';
}

async function call(tenant: Tenant, method: Method, url: string, payload?: unknown): Promise<LightMyRequestResponse> {
  return context.app.inject({ method, url, headers: tenant.dashboard, ...(payload === undefined ? {} : { payload: payload as object }) });
}

/**
 * A 400 whose errors[] is exactly the expected entries (type field, location, path, code), each
 * with a message; the body carries `code` only when there is exactly one entry with a code.
 */
function assertInvalid(response: LightMyRequestResponse, expected: Expected[], message = 'Validation Error'): ErrorBody {
  assert.equal(response.statusCode, 400, response.body);
  const body = json<ErrorBody>(response);
  assert.equal(body.success, false);
  assert.equal(body.message, message);
  assert.deepEqual(
    body.errors.map((e) => ({ type: e.type, location: e.location, path: e.path, code: e.code })),
    expected.map((e) => ({ type: 'field', location: e.location ?? 'body', path: e.path, code: e.code })),
  );
  for (const entry of body.errors) assert.ok(typeof entry.msg === 'string' && entry.msg.length > 0, 'every entry has a msg');
  assert.equal(body.code, expected.length === 1 ? expected[0]!.code : undefined);
  assert.equal('statusCode' in body, false, 'the status is not repeated in the body');
  return body;
}

function created<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  assert.equal(response.statusCode, 201, response.body);
  return json<T>(response);
}

async function create(tenant: Tenant, kind: Kind, payload: Record<string, unknown>) {
  return created<Record<string, unknown> & { id: string }>(await call(tenant, 'POST', `/v3/${kind}`, payload));
}

/** Total of the kind's list: a rejected write must leave nothing behind. */
async function total(tenant: Tenant, kind: Kind): Promise<number> {
  const response = await call(tenant, 'GET', `/v3/${kind}s`);
  assert.equal(response.statusCode, 200, response.body);
  const body = json(response);
  assert.equal(body.data.length, Math.min(body.total, body.limit));
  return body.total as number;
}

async function read(tenant: Tenant, kind: Kind, id: string) {
  const response = await call(tenant, 'GET', `/v3/${kind}/${id}`);
  assert.equal(response.statusCode, 200, response.body);
  return json(response);
}

const LOCATION = { name: 'Main Street', timezoneName: 'Europe/London' };
const SERVICE = { name: 'Consultation', duration: 30 };
const RESOURCE = { name: 'Dr. Jones' };
const customer = (email: string) => ({ firstName: 'Ada', lastName: 'Lovelace', email });
const x = (n: number) => 'x'.repeat(n);

describe('locations', () => {
  const cases: Array<[string, Record<string, unknown>, Expected[]]> = [
    ['name missing', { timezoneName: 'Europe/London' }, [{ path: 'name', code: 'LOCATION-117' }]],
    ['name empty', { ...LOCATION, name: '' }, [{ path: 'name', code: 'LOCATION-117' }]],
    ['name over 50 characters', { ...LOCATION, name: x(51) }, [{ path: 'name', code: 'LOCATION-125' }]],
    ['timezoneName missing', { name: 'Main Street' }, [{ path: 'timezoneName', code: 'LOCATION-120' }]],
    ['timezoneName not IANA', { ...LOCATION, timezoneName: 'Mars/Base' }, [{ path: 'timezoneName', code: 'LOCATION-101' }]],
    ['phone of 6 characters', { ...LOCATION, phone: '123456' }, [{ path: 'phone', code: 'LOCATION-126' }]],
    ['phone of 16 characters', { ...LOCATION, phone: '1234567890123456' }, [{ path: 'phone', code: 'LOCATION-126' }]],
    ['bookingTimerMinutes 0', { ...LOCATION, bookingTimerMinutes: 0 }, [{ path: 'bookingTimerMinutes', code: 'SETTINGS-102' }]],
    ['bookingTimerMinutes 31', { ...LOCATION, bookingTimerMinutes: 31 }, [{ path: 'bookingTimerMinutes', code: 'SETTINGS-102' }]],
    ['address without country', { ...LOCATION, address: { addressLine1: '1 High Street', city: 'London' } }, [{ path: 'address.country', code: 'ADDRESS-106' }]],
    ['country of 3 letters', { ...LOCATION, address: { country: 'GBR' } }, [{ path: 'address.country', code: 'ADDRESS-104' }]],
    ['addressLine1 of 1 character', { ...LOCATION, address: { country: 'GB', addressLine1: 'A' } }, [{ path: 'address.addressLine1', code: 'ADDRESS-100' }]],
    ['addressLine2 of 51 characters', { ...LOCATION, address: { country: 'GB', addressLine2: x(51) } }, [{ path: 'address.addressLine2', code: 'ADDRESS-101' }]],
    ['city of 1 character', { ...LOCATION, address: { country: 'GB', city: 'L' } }, [{ path: 'address.city', code: 'ADDRESS-102' }]],
    ['state of 4 characters', { ...LOCATION, address: { country: 'US', state: 'CALI' } }, [{ path: 'address.state', code: 'ADDRESS-103' }]],
    ['postalCode of 11 characters', { ...LOCATION, address: { country: 'GB', postalCode: x(11) } }, [{ path: 'address.postalCode', code: 'ADDRESS-105' }]],
    ['country not in ISO 3166-1', { ...LOCATION, address: { country: 'XX' } }, [{ path: 'address.country', code: 'ADDRESS-107' }]],
    ['state not a subdivision of the country', { ...LOCATION, address: { country: 'US', state: 'ZZ' } }, [{ path: 'address.state', code: 'ADDRESS-108' }]],
    ['state of another country', { ...LOCATION, address: { country: 'GB', state: 'CA' } }, [{ path: 'address.state', code: 'ADDRESS-108' }]],
    ['old field name line1', { ...LOCATION, address: { country: 'GB', line1: '1 High Street' } }, [{ path: 'address.line1' }]],
    ['email without @', { ...LOCATION, email: 'no-at-sign' }, [{ path: 'email', code: 'EMAIL-101' }]],
    [
      'weekly interval ending before it starts',
      { ...LOCATION, weeklyAvailability: { mon: [{ start: '17:00', end: '09:00' }] } },
      [{ path: 'weeklyAvailability.mon.0.end', code: 'BUSINESSHOURS-100' }],
    ],
    [
      'weekly intervals overlapping',
      {
        ...LOCATION,
        weeklyAvailability: {
          tue: [
            { start: '09:00', end: '12:00' },
            { start: '11:30', end: '15:00' },
          ],
        },
      },
      [{ path: 'weeklyAvailability.tue.1.start' }],
    ],
    ['weekly end 24:30', { ...LOCATION, weeklyAvailability: { sat: [{ start: '20:00', end: '24:30' }] } }, [{ path: 'weeklyAvailability.sat.0.end' }]],
    ['weekly day unknown', { ...LOCATION, weeklyAvailability: { monday: [] } }, [{ path: 'weeklyAvailability.monday' }]],
    ['unknown field', { ...LOCATION, colour: 'blue' }, [{ path: 'colour' }]],
    ['unknown address field', { ...LOCATION, address: { country: 'GB', street: 'High Street' } }, [{ path: 'address.street' }]],
  ];

  test('each rule on POST /v3/location: 400 with path and code; nothing is created', async (t) => {
    const tenant = await context.world.tenant();
    for (const [label, payload, expected] of cases) {
      await t.test(label, async () => void assertInvalid(await call(tenant, 'POST', '/v3/location', payload), expected));
    }
    assert.equal(await total(tenant, 'location'), 0);
  });

  test('the message of an unknown field names it', async () => {
    const tenant = await context.world.tenant();
    const body = assertInvalid(await call(tenant, 'POST', '/v3/location', { ...LOCATION, colour: 'blue' }), [{ path: 'colour' }]);
    assert.match(body.errors[0]!.msg, /colour/);
  });

  test('an empty body names both required fields and has no body code', async () => {
    const tenant = await context.world.tenant();
    assertInvalid(await call(tenant, 'POST', '/v3/location', {}), [
      { path: 'name', code: 'LOCATION-117' },
      { path: 'timezoneName', code: 'LOCATION-120' },
    ]);
    assertInvalid(await call(tenant, 'POST', '/v3/location'), [
      { path: 'name', code: 'LOCATION-117' },
      { path: 'timezoneName', code: 'LOCATION-120' },
    ]);
    assert.equal(await total(tenant, 'location'), 0);
  });

  test('every failing field is reported at once', async () => {
    const tenant = await context.world.tenant();
    assertInvalid(
      await call(tenant, 'POST', '/v3/location', { name: x(51), timezoneName: 'Mars/Base', phone: '123', bookingTimerMinutes: 31, address: { addressLine1: 'A' } }),
      [
        { path: 'name', code: 'LOCATION-125' },
        { path: 'timezoneName', code: 'LOCATION-101' },
        { path: 'address.country', code: 'ADDRESS-106' },
        { path: 'address.addressLine1', code: 'ADDRESS-100' },
        { path: 'phone', code: 'LOCATION-126' },
        { path: 'bookingTimerMinutes', code: 'SETTINGS-102' },
      ],
    );
  });

  test('the boundaries are accepted: name of 50, phone of 7 and 15, timer 1 and 30, "24:00" end, touching intervals', async () => {
    const tenant = await context.world.tenant();
    const first = await create(tenant, 'location', {
      name: x(50),
      timezoneName: 'Asia/Kolkata',
      phone: '1234567',
      bookingTimerMinutes: 1,
      address: { addressLine1: '1 Road', addressLine2: 'Up', city: 'Pune', state: 'MH', postalCode: '41', country: 'in' },
      weeklyAvailability: {
        mon: [
          { start: '00:00', end: '12:00' },
          { start: '12:00', end: '24:00' },
        ],
      },
    });
    assert.equal(first.name, x(50));
    // ISO 3166 codes are stored in capitals whatever case they were sent in.
    assert.deepEqual(first.address, { addressLine1: '1 Road', addressLine2: 'Up', city: 'Pune', state: 'MH', postalCode: '41', country: 'IN' });
    assert.equal(first.bookingTimerMinutes, 1);
    const second = await create(tenant, 'location', { ...LOCATION, phone: '123456789012345', bookingTimerMinutes: 30 });
    assert.equal(second.phone, '123456789012345');
    assert.equal(second.bookingTimerMinutes, 30);
    assert.equal(await total(tenant, 'location'), 2);
  });

  test('PUT and PATCH of an existing location check the same rules and change nothing when rejected', async () => {
    const tenant = await context.world.tenant();
    const location = await create(tenant, 'location', { ...LOCATION, address: { country: 'GB', city: 'London' }, phone: '02071234567' });
    const before = await read(tenant, 'location', location.id);
    const bad: Array<[Record<string, unknown>, Expected[]]> = [
      [{ name: '' }, [{ path: 'name', code: 'LOCATION-117' }]],
      [{ name: x(51) }, [{ path: 'name', code: 'LOCATION-125' }]],
      [{ timezoneName: 'Mars/Base' }, [{ path: 'timezoneName', code: 'LOCATION-101' }]],
      [{ phone: '123456' }, [{ path: 'phone', code: 'LOCATION-126' }]],
      [{ bookingTimerMinutes: 0 }, [{ path: 'bookingTimerMinutes', code: 'SETTINGS-102' }]],
      [{ address: { city: 'Leeds' } }, [{ path: 'address.country', code: 'ADDRESS-106' }]],
      [{ weeklyAvailability: { fri: [{ start: '10:00', end: '09:59' }] } }, [{ path: 'weeklyAvailability.fri.0.end', code: 'BUSINESSHOURS-100' }]],
      [{ companyId: tenant.companyId }, [{ path: 'companyId' }]],
    ];
    for (const method of ['PUT', 'PATCH'] as const) {
      for (const [payload, expected] of bad) {
        assertInvalid(await call(tenant, method, `/v3/location/${location.id}`, payload), expected);
      }
    }
    assert.deepEqual(await read(tenant, 'location', location.id), before);
  });
});

describe('services', () => {
  const select = { ...SERVICE, duration: 60, durationSelect: true, durationMin: 30, durationMax: 120, durationInterval: 15 };
  const cases: Array<[string, Record<string, unknown>, Expected[]]> = [
    ['name missing', { duration: 30 }, [{ path: 'name', code: 'SERVICE-120' }]],
    ['name empty', { ...SERVICE, name: '' }, [{ path: 'name', code: 'SERVICE-120' }]],
    ['name over 255 characters', { ...SERVICE, name: x(256) }, [{ path: 'name', code: 'SERVICE-121' }]],
    ['duration 0', { ...SERVICE, duration: 0 }, [{ path: 'duration', code: 'SERVICE-123' }]],
    ['duration -5', { ...SERVICE, duration: -5 }, [{ path: 'duration', code: 'SERVICE-123' }]],
    ['duration missing', { name: 'Consultation' }, [{ path: 'duration' }]],
    ['duration as a string', { ...SERVICE, duration: '30' }, [{ path: 'duration' }]],
    ['SERVICE-112 interval 0', { ...select, durationInterval: 0 }, [{ path: 'durationInterval', code: 'SERVICE-112' }]],
    ['SERVICE-112 interval missing', { ...select, durationInterval: undefined }, [{ path: 'durationInterval', code: 'SERVICE-112' }]],
    ['SERVICE-113 min 0', { ...select, durationMin: 0, durationMax: 60, duration: 30 }, [{ path: 'durationMin', code: 'SERVICE-113' }]],
    ['SERVICE-114 max equal to min', { ...select, durationMin: 60, durationMax: 60, duration: 60 }, [{ path: 'durationMax', code: 'SERVICE-114' }]],
    ['SERVICE-114 max below min', { ...select, durationMin: 90, durationMax: 45, duration: 60 }, [{ path: 'durationMax', code: 'SERVICE-114' }]],
    ['SERVICE-115 max not divisible by min', { ...select, durationMin: 40, durationMax: 100, durationInterval: 20, duration: 40 }, [{ path: 'durationMax', code: 'SERVICE-115' }]],
    ['SERVICE-116 max not divisible by interval', { ...select, durationMin: 30, durationMax: 90, durationInterval: 20, duration: 30 }, [{ path: 'durationMax', code: 'SERVICE-116' }]],
    ['SERVICE-125 duration above max', { ...select, duration: 150 }, [{ path: 'duration', code: 'SERVICE-125' }]],
    ['SERVICE-125 duration below min', { ...select, duration: 15 }, [{ path: 'duration', code: 'SERVICE-125' }]],
    [
      'durationSelect alone',
      { ...SERVICE, durationSelect: true },
      [
        { path: 'durationInterval', code: 'SERVICE-112' },
        { path: 'durationMin', code: 'SERVICE-113' },
        { path: 'durationMax', code: 'SERVICE-114' },
      ],
    ],
    ['bookInAdvance 10081', { ...SERVICE, bookInAdvance: 10_081 }, [{ path: 'bookInAdvance', code: 'SETTINGS-103' }]],
    ['bookInAdvance -1', { ...SERVICE, bookInAdvance: -1 }, [{ path: 'bookInAdvance', code: 'SETTINGS-103' }]],
    ['bookAheadUnit years', { ...SERVICE, bookAheadUnit: 'years', bookAheadValue: 1 }, [{ path: 'bookAheadUnit', code: 'SETTINGS-104' }]],
    ['bookAheadValue without unit', { ...SERVICE, bookAheadValue: 10 }, [{ path: 'bookAheadValue', code: 'SETTINGS-106' }]],
    ['bookAheadUnit without value', { ...SERVICE, bookAheadUnit: 'weeks' }, [{ path: 'bookAheadValue', code: 'SETTINGS-106' }]],
    ['400 days ahead', { ...SERVICE, bookAheadUnit: 'days', bookAheadValue: 400 }, [{ path: 'bookAheadValue', code: 'SETTINGS-105' }]],
    ['53 weeks ahead', { ...SERVICE, bookAheadUnit: 'weeks', bookAheadValue: 53 }, [{ path: 'bookAheadValue', code: 'SETTINGS-105' }]],
    ['1441 months ahead', { ...SERVICE, bookAheadUnit: 'months', bookAheadValue: 1441 }, [{ path: 'bookAheadValue', code: 'SETTINGS-105' }]],
    ['0 days ahead', { ...SERVICE, bookAheadUnit: 'days', bookAheadValue: 0 }, [{ path: 'bookAheadValue', code: 'SETTINGS-105' }]],
    [
      'weekly interval ending before it starts',
      { ...SERVICE, weeklyAvailability: { wed: [{ start: '09:00', end: '10:00' }, { start: '14:00', end: '13:00' }] } },
      [{ path: 'weeklyAvailability.wed.1.end', code: 'BUSINESSHOURS-100' }],
    ],
    ['roundRobin unknown', { ...SERVICE, roundRobin: 'FASTEST' }, [{ path: 'roundRobin' }]],
    ['unknown field', { ...SERVICE, maxCapacity: 4 }, [{ path: 'maxCapacity' }]],
  ];

  test('each rule on POST /v3/service: 400 with path and code; nothing is created', async (t) => {
    const tenant = await context.world.tenant();
    for (const [label, payload, expected] of cases) {
      await t.test(label, async () => void assertInvalid(await call(tenant, 'POST', '/v3/service', payload), expected));
    }
    assert.equal(await total(tenant, 'service'), 0);
  });

  test('field1 to field10 of 256 characters give CUSTOMF-100 to CUSTOMF-109; 255 is accepted', async () => {
    const tenant = await context.world.tenant();
    for (let n = 1; n <= 10; n++) {
      assertInvalid(await call(tenant, 'POST', '/v3/service', { ...SERVICE, [`field${n}`]: x(256) }), [{ path: `field${n}`, code: `CUSTOMF-${99 + n}` }]);
    }
    assert.equal(await total(tenant, 'service'), 0);
    const fields = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i + 1}`, x(255)]));
    const service = await create(tenant, 'service', { ...SERVICE, ...fields });
    for (let n = 1; n <= 10; n++) assert.equal(service[`field${n}`], x(255));
  });

  test('valid setups are accepted: duration select, every book-ahead unit at its maximum, bookInAdvance 10080', async () => {
    const tenant = await context.world.tenant();
    const service = await create(tenant, 'service', select);
    assert.deepEqual(
      [service.durationSelect, service.durationMin, service.durationMax, service.durationInterval, service.duration],
      [true, 30, 120, 15, 60],
    );
    await create(tenant, 'service', { ...SERVICE, bookAheadUnit: 'days', bookAheadValue: 365, bookInAdvance: 10_080 });
    await create(tenant, 'service', { ...SERVICE, bookAheadUnit: 'weeks', bookAheadValue: 52 });
    await create(tenant, 'service', { ...SERVICE, bookAheadUnit: 'months', bookAheadValue: 1440 });
    await create(tenant, 'service', { ...SERVICE, bookAheadUnit: 'none', bookAheadValue: null });
    // Without durationSelect the min, max and interval are not checked.
    await create(tenant, 'service', { ...SERVICE, durationMin: 0, durationMax: 7, durationInterval: 0 });
    assert.equal(await total(tenant, 'service'), 6);
  });

  test('PUT and PATCH check the duration-select rules on the merged state and change nothing when rejected', async () => {
    const tenant = await context.world.tenant();
    const service = await create(tenant, 'service', select);
    const before = await read(tenant, 'service', service.id);
    const bad: Array<[Record<string, unknown>, Expected[]]> = [
      [{ durationInterval: 0 }, [{ path: 'durationInterval', code: 'SERVICE-112' }]],
      [{ durationMin: 0 }, [{ path: 'durationMin', code: 'SERVICE-113' }]],
      [{ durationMax: 30 }, [{ path: 'durationMax', code: 'SERVICE-114' }]],
      [{ durationMax: 135 }, [{ path: 'durationMax', code: 'SERVICE-115' }]],
      [{ durationInterval: 25 }, [{ path: 'durationMax', code: 'SERVICE-116' }]],
      [{ duration: 150 }, [{ path: 'duration', code: 'SERVICE-125' }]],
      [{ durationMin: 90, durationMax: 180 }, [{ path: 'duration', code: 'SERVICE-125' }]],
      [{ duration: 0 }, [{ path: 'duration', code: 'SERVICE-123' }]],
      [{ name: '' }, [{ path: 'name', code: 'SERVICE-120' }]],
      [{ name: x(256) }, [{ path: 'name', code: 'SERVICE-121' }]],
      [{ field7: x(256) }, [{ path: 'field7', code: 'CUSTOMF-106' }]],
    ];
    for (const method of ['PUT', 'PATCH'] as const) {
      for (const [payload, expected] of bad) {
        assertInvalid(await call(tenant, method, `/v3/service/${service.id}`, payload), expected);
      }
    }
    assert.deepEqual(await read(tenant, 'service', service.id), before);

    // Turning durationSelect on for a plain service is checked against its stored (empty) settings.
    const plain = await create(tenant, 'service', SERVICE);
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${plain.id}`, { durationSelect: true }), [
      { path: 'durationInterval', code: 'SERVICE-112' },
      { path: 'durationMin', code: 'SERVICE-113' },
      { path: 'durationMax', code: 'SERVICE-114' },
    ]);
    // Given together, the settings pass.
    const changed = await call(tenant, 'PUT', `/v3/service/${plain.id}`, { durationSelect: true, durationMin: 30, durationMax: 60, durationInterval: 30 });
    assert.equal(changed.statusCode, 200, changed.body);
    // A change that keeps the merged state valid passes too.
    const moved = await call(tenant, 'PATCH', `/v3/service/${service.id}`, { duration: 120 });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(json(moved).duration, 120);
  });

  test('PUT checks the book-ahead rules on the merged state', async () => {
    const tenant = await context.world.tenant();
    const service = await create(tenant, 'service', { ...SERVICE, bookAheadUnit: 'days', bookAheadValue: 30 });
    // 30 weeks is fine; 60 weeks with the stored unit is not.
    const weeks = await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadUnit: 'weeks' });
    assert.equal(weeks.statusCode, 200, weeks.body);
    assert.deepEqual([json(weeks).bookAheadUnit, json(weeks).bookAheadValue], ['weeks', 30]);
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadValue: 60 }), [{ path: 'bookAheadValue', code: 'SETTINGS-105' }]);
    // Clearing only one of the pair breaks SETTINGS-106; clearing both is fine.
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadUnit: 'none' }), [{ path: 'bookAheadValue', code: 'SETTINGS-106' }]);
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadValue: null }), [{ path: 'bookAheadValue', code: 'SETTINGS-106' }]);
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadUnit: 'years' }), [{ path: 'bookAheadUnit', code: 'SETTINGS-104' }]);
    assertInvalid(await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookInAdvance: 10_081 }), [{ path: 'bookInAdvance', code: 'SETTINGS-103' }]);
    const current = await read(tenant, 'service', service.id);
    assert.deepEqual([current.bookAheadUnit, current.bookAheadValue, current.bookInAdvance], ['weeks', 30, 0]);
    const cleared = await call(tenant, 'PUT', `/v3/service/${service.id}`, { bookAheadUnit: 'none', bookAheadValue: null });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.deepEqual([json(cleared).bookAheadUnit, json(cleared).bookAheadValue], ['none', null]);
  });
});

describe('resources', () => {
  const cases: Array<[string, Record<string, unknown>, Expected[]]> = [
    ['name missing', { email: 'jones@example.com' }, [{ path: 'name', code: 'RESOURCE-114' }]],
    ['name empty', { name: '' }, [{ path: 'name', code: 'RESOURCE-114' }]],
    ['name over 255 characters', { name: x(256) }, [{ path: 'name', code: 'RESOURCE-115' }]],
    ['timezoneName not IANA', { ...RESOURCE, timezoneName: 'Nowhere/Else' }, [{ path: 'timezoneName', code: 'RESOURCE-100' }]],
    ['phone of 6 characters', { ...RESOURCE, phone: '123456' }, [{ path: 'phone', code: 'CONTACT-101' }]],
    ['email without extension', { ...RESOURCE, email: 'jones@clinic' }, [{ path: 'email', code: 'EMAIL-101' }]],
    [
      'weekly interval ending before it starts',
      { ...RESOURCE, weeklyAvailability: { sun: [{ start: '12:00', end: '08:00' }] } },
      [{ path: 'weeklyAvailability.sun.0.end', code: 'BUSINESSHOURS-100' }],
    ],
    ['locationIds entry not a uuid', { ...RESOURCE, locationIds: ['nope'] }, [{ path: 'locationIds.0' }]],
    ['unknown field', { ...RESOURCE, colour: 'red' }, [{ path: 'colour' }]],
  ];

  test('each rule on POST /v3/resource: 400 with path and code; nothing is created', async (t) => {
    const tenant = await context.world.tenant();
    for (const [label, payload, expected] of cases) {
      await t.test(label, async () => void assertInvalid(await call(tenant, 'POST', '/v3/resource', payload), expected));
    }
    assert.equal(await total(tenant, 'resource'), 0);
  });

  test('a name of 255, an IANA zone and "24:00" are accepted', async () => {
    const tenant = await context.world.tenant();
    const resource = await create(tenant, 'resource', {
      name: x(255),
      timezoneName: 'America/New_York',
      weeklyAvailability: { mon: [{ start: '13:00', end: '24:00' }] },
    });
    assert.equal(resource.timezoneName, 'America/New_York');
    assert.deepEqual(resource.weeklyAvailability, { mon: [{ start: '13:00', end: '24:00' }] });
  });

  test('PUT and PATCH check the same rules and change nothing when rejected', async () => {
    const tenant = await context.world.tenant();
    const resource = await create(tenant, 'resource', { ...RESOURCE, timezoneName: 'Europe/Paris' });
    const before = await read(tenant, 'resource', resource.id);
    const bad: Array<[Record<string, unknown>, Expected[]]> = [
      [{ name: '' }, [{ path: 'name', code: 'RESOURCE-114' }]],
      [{ name: x(256) }, [{ path: 'name', code: 'RESOURCE-115' }]],
      [{ timezoneName: 'Nowhere/Else' }, [{ path: 'timezoneName', code: 'RESOURCE-100' }]],
      [{ weeklyAvailability: { thu: [{ start: '09:00', end: '08:00' }] } }, [{ path: 'weeklyAvailability.thu.0.end', code: 'BUSINESSHOURS-100' }]],
      [{ bookingLimit: -1 }, [{ path: 'bookingLimit' }]],
    ];
    for (const method of ['PUT', 'PATCH'] as const) {
      for (const [payload, expected] of bad) {
        assertInvalid(await call(tenant, method, `/v3/resource/${resource.id}`, payload), expected);
      }
    }
    assert.deepEqual(await read(tenant, 'resource', resource.id), before);
  });
});

describe('customers', () => {
  const cases: Array<[string, Record<string, unknown>, Expected[]]> = [
    ['email missing', { firstName: 'Ada' }, [{ path: 'email', code: 'CUSTOMER-103' }]],
    ['email over 254 characters', customer(`${x(243)}@example.com`), [{ path: 'email', code: 'EMAIL-100' }]],
    ['email without @', customer('no-at-sign'), [{ path: 'email', code: 'EMAIL-101' }]],
    ['email without extension', customer('user@domain'), [{ path: 'email', code: 'EMAIL-101' }]],
    ['phone of 6 characters', { ...customer('ada@example.com'), phone: '123456' }, [{ path: 'phone', code: 'CONTACT-101' }]],
    ['unknown field', { ...customer('ada@example.com'), nickname: 'Countess' }, [{ path: 'nickname' }]],
  ];

  test('each rule on POST /v3/customer: 400 with path and code; nothing is created', async (t) => {
    const tenant = await context.world.tenant();
    for (const [label, payload, expected] of cases) {
      await t.test(label, async () => void assertInvalid(await call(tenant, 'POST', '/v3/customer', payload), expected));
    }
    for (let n = 1; n <= 10; n++) {
      assertInvalid(await call(tenant, 'POST', '/v3/customer', { ...customer('ada@example.com'), [`field${n}`]: x(256) }), [
        { path: `field${n}`, code: `CUSTOMF-${99 + n}` },
      ]);
    }
    assert.equal(await total(tenant, 'customer'), 0);
  });

  test('an email of exactly 254 characters and custom fields of 255 are accepted', async () => {
    const tenant = await context.world.tenant();
    const email = `${x(242)}@example.com`;
    assert.equal(email.length, 254);
    const fields = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i + 1}`, x(255)]));
    const body = await create(tenant, 'customer', { ...customer(email), ...fields });
    assert.equal(body.email, email);
    assert.equal(body.field10, x(255));
  });

  test('a duplicate email in the same company, ignoring case, is 409 and creates nothing', async () => {
    const tenant = await context.world.tenant();
    const first = await create(tenant, 'customer', customer('Ada@Example.com'));
    const duplicate = await call(tenant, 'POST', '/v3/customer', customer('ada@EXAMPLE.COM'));
    assert.equal(duplicate.statusCode, 409, duplicate.body);
    const body = json<ErrorBody>(duplicate);
    assert.equal(body.success, false);
    assert.match(body.message, /already exists/);
    assert.deepEqual(body.errors.map((e) => [e.type, e.location, e.path]), [['field', 'body', 'email']]);
    assert.equal(await total(tenant, 'customer'), 1);
    assert.equal((await read(tenant, 'customer', first.id)).email, 'Ada@Example.com');
  });

  test('changing an email to another customer\'s is 409; to its own in other case is fine', async () => {
    const tenant = await context.world.tenant();
    const ada = await create(tenant, 'customer', customer('ada@example.com'));
    const grace = await create(tenant, 'customer', { firstName: 'Grace', email: 'grace@example.com' });
    for (const method of ['PUT', 'PATCH'] as const) {
      const response = await call(tenant, method, `/v3/customer/${grace.id}`, { email: 'ADA@example.com' });
      assert.equal(response.statusCode, 409, response.body);
    }
    assert.equal((await read(tenant, 'customer', grace.id)).email, 'grace@example.com');
    const own = await call(tenant, 'PUT', `/v3/customer/${ada.id}`, { email: 'ADA@example.com' });
    assert.equal(own.statusCode, 200, own.body);
    assert.equal(json(own).email, 'ADA@example.com');
    assertInvalid(await call(tenant, 'PUT', `/v3/customer/${ada.id}`, { email: 'user@domain' }), [{ path: 'email', code: 'EMAIL-101' }]);
    assertInvalid(await call(tenant, 'PATCH', `/v3/customer/${ada.id}`, { field2: x(256) }), [{ path: 'field2', code: 'CUSTOMF-101' }]);
  });

  test('the same email in another company is 201', async () => {
    const one = await context.world.tenant();
    const two = await context.world.tenant();
    await create(one, 'customer', customer('shared@example.com'));
    await create(two, 'customer', customer('SHARED@example.com'));
    assert.equal(await total(one, 'customer'), 1);
    assert.equal(await total(two, 'customer'), 1);
  });

  test('an archived customer\'s email can be reused', async () => {
    const tenant = await context.world.tenant();
    const old = await create(tenant, 'customer', customer('again@example.com'));
    const archived = await call(tenant, 'DELETE', `/v3/customer/${old.id}`);
    assert.equal(archived.statusCode, 204, archived.body);
    const fresh = await create(tenant, 'customer', customer('Again@example.com'));
    assert.notEqual(fresh.id, old.id);
    assert.equal(await total(tenant, 'customer'), 1);
  });

  test('DELETE /v3/customer/ without an id is 400 on params', async () => {
    const tenant = await context.world.tenant();
    assertInvalid(await call(tenant, 'DELETE', '/v3/customer/'), [{ path: 'id', location: 'params' }]);
    assertInvalid(await call(tenant, 'DELETE', '/v3/customer/not-a-uuid'), [{ path: 'id', location: 'params' }]);
  });
});

test('a malformed id in the path is 400 on params for every catalog read and write', async () => {
  const tenant = await context.world.tenant();
  for (const kind of ['location', 'service', 'resource', 'customer'] as const) {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const payload = method === 'PUT' || method === 'PATCH' ? {} : undefined;
      assertInvalid(await call(tenant, method, `/v3/${kind}/12345`, payload), [{ path: 'id', location: 'params' }]);
    }
  }
});
