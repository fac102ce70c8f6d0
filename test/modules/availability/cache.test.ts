// The availability cache never changes an answer: every search through the application (cached,
// in process or through Redis) equals the same search on a second instance over the same database
// whose cache never holds anything; a write that changes slot generation shows at once; a write to
// another record leaves a search's cache key alone.
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import type { Redis } from 'ioredis';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/platform/config.js';
import type { App } from '../../../src/platform/http/types.js';
import type { WeeklyAvailability } from '../../../src/platform/database/schema.js';
import { createMemoryAvailabilityCache, createRedisAvailabilityCache } from '../../../src/modules/availability/cache.js';
import { createRedisGuard } from '../../../src/platform/redis.js';
import type { AvailabilityCache } from '../../../src/modules/availability/cache.js';
import { createAvailabilityService } from '../../../src/modules/availability/service.js';
import { createAvailabilityRepository } from '../../../src/modules/availability/repository.js';
import { createServiceService } from '../../../src/modules/services/service.js';
import { createServiceRepository } from '../../../src/modules/services/repository.js';
import { createCatalogLinks } from '../../../src/modules/catalog/links.js';
import { TEST_SECRETS, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { insertAppointment, insertBlock } from '../../helpers/rows.js';
import { LONDON, NINE_TO_FIVE, WEEKDAYS_9_TO_17 } from '../../helpers/world.js';
import type { Tenant, TenantFixture } from '../../helpers/world.js';

let context: TestContext;
/** The same application on the same database with the availability cache switched off. */
let reference: App;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', AVAILABILITY_CACHE: 'false' });
  assert.equal(config.availabilityCacheEnabled, false);
  reference = await buildApp({ config, database: context.database, secrets: TEST_SECRETS, redis: undefined });
});
after(async () => {
  await reference.close();
  await context.close();
});

interface Slot {
  startTime: string;
  endTime: string;
  resourceIds: string[];
  remaining: number;
}
interface Availability {
  timezoneName: string;
  availableTimes: Slot[];
  availableDays: Array<{ date: string; available: boolean; reason: string | null }>;
}

const HOURS: WeeklyAvailability[] = [
  WEEKDAYS_9_TO_17,
  { mon: [{ start: '10:00', end: '14:00' }], tue: [{ start: '10:00', end: '14:00' }], thu: [{ start: '12:00', end: '18:00' }] },
  { mon: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:00' }], wed: [{ start: '08:00', end: '20:00' }], thu: NINE_TO_FIVE },
];

/** A Monday at least two weeks ahead in London. */
function monday(): string {
  const ahead = DateTime.now().setZone(LONDON).startOf('day').plus({ weeks: 2 });
  return ahead.plus({ days: (8 - ahead.weekday) % 7 }).toISODate()!;
}
const plusDays = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
const at = (date: string, time: string) => DateTime.fromISO(`${date}T${time}`, { zone: LONDON });
const localTimes = (body: Availability) => body.availableTimes.map((slot) => DateTime.fromISO(slot.startTime, { zone: LONDON }).toFormat('ccc HH:mm'));

/** A PUT that must answer 200 (an update, which clears the cached searches it concerns). */
async function update(tenant: Tenant, url: string, payload: Record<string, unknown>) {
  const response = await context.app.inject({ method: 'PUT', url, headers: tenant.dashboard, payload });
  assert.equal(response.statusCode, 200, response.body);
}

interface World {
  tenant: TenantFixture;
  locationId: string;
  serviceIds: [string, string];
  resourceIds: [string, string];
}

/** One location, two services, two resources that provide both. */
async function world(): Promise<World> {
  const tenant = await context.world.tenant();
  const locationId = await tenant.location({ hours: WEEKDAYS_9_TO_17 });
  const serviceIds: [string, string] = [await tenant.service({ name: 'A', locationIds: [locationId] }), await tenant.service({ name: 'B', locationIds: [locationId] })];
  const [r1, r2] = await tenant.resources([{ name: 'R1' }, { name: 'R2' }], { locationIds: [locationId], serviceIds });
  return { tenant, locationId, serviceIds, resourceIds: [r1!, r2!] };
}

function availabilityUrl(w: World, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams({ LocationId: w.locationId });
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  return `/v3/availability?${params}`;
}

async function searchOn(app: App, w: World, query: Record<string, string | undefined>) {
  const response = await app.inject({ method: 'GET', url: availabilityUrl(w, query), headers: w.tenant.dashboard });
  return { status: response.statusCode, body: json(response) };
}

const insertBlockOf = (w: World, scope: { locationId?: string; resourceId?: string; serviceId?: string }, start: DateTime) =>
  insertBlock(context.database.db, w.tenant.companyId, scope, start);

const insertBooking = (w: World, serviceId: string, resourceId: string, start: DateTime) =>
  insertAppointment(context.database.db, { companyId: w.tenant.companyId, locationId: w.locationId, serviceId, resourceIds: [resourceId], start });

// --- The property ---------------------------------------------------------------------------------

const index = fc.constantFrom(0 as const, 1 as const);
const search = fc.record({
  kind: fc.constant('search' as const),
  service: index,
  offset: fc.integer({ min: 0, max: 3 }),
  span: fc.integer({ min: 0, max: 1 }),
  // RANDOM is left out: its pick is seeded by the search and the minute, and two instances may
  // straddle a minute boundary.
  roundRobin: fc.constantFrom(undefined, 'NONE', 'BALANCED', 'COMBINED'),
  resources: fc.constantFrom('all' as const, 0 as const, 1 as const),
  twice: fc.boolean(),
});
const write = fc.oneof(
  fc.record(
    {
      kind: fc.constant('service' as const),
      service: index,
      padding: fc.constantFrom(0, 15, 30),
      bookingsPerSlot: fc.constantFrom(1, 2),
      bookingInterval: fc.constantFrom(null, 30, 60),
    },
    { requiredKeys: ['kind', 'service'] },
  ),
  fc.record({ kind: fc.constant('resource' as const), resource: index, hours: fc.constantFrom(null, 0, 1, 2) }),
  fc.record({ kind: fc.constant('location' as const), hours: fc.constantFrom(null, 0, 1, 2) }),
  // Direct inserts followed by the no-op update that clears the affected record's searches,
  // as the appointment and block operations will.
  fc.record({ kind: fc.constant('booking' as const), service: index, resource: index, offset: fc.integer({ min: 0, max: 3 }), hour: fc.integer({ min: 9, max: 16 }) }),
  fc.record({ kind: fc.constant('block' as const), scope: fc.constantFrom('location' as const, 'service' as const, 'resource' as const), which: index, offset: fc.integer({ min: 0, max: 3 }), hour: fc.integer({ min: 8, max: 17 }) }),
);
const anyAction = fc.oneof(search, write);
type Action = typeof anyAction extends fc.Arbitrary<infer T> ? T : never;

async function apply(w: World, start: string, action: Action): Promise<void> {
  const { tenant } = w;
  switch (action.kind) {
    case 'search': {
      const query = {
        ServiceId: w.serviceIds[action.service],
        startDate: plusDays(start, action.offset),
        endDate: plusDays(start, action.offset + action.span),
        roundRobin: action.roundRobin,
        ResourceIds: action.resources === 'all' ? undefined : w.resourceIds[action.resources],
      };
      const cached = await searchOn(context.app, w, query);
      const again = action.twice ? await searchOn(context.app, w, query) : cached;
      const truth = await searchOn(reference, w, query);
      assert.equal(truth.status, 200, JSON.stringify(truth.body));
      assert.deepEqual(cached, truth, `search ${JSON.stringify(query)}`);
      assert.deepEqual(again, truth, `repeated search ${JSON.stringify(query)}`);
      return;
    }
    case 'service': {
      const { kind: _kind, service, ...fields } = action;
      await update(tenant, `/v3/service/${w.serviceIds[service]}`, fields);
      return;
    }
    case 'resource':
      await update(tenant, `/v3/resource/${w.resourceIds[action.resource]}`, { weeklyAvailability: action.hours === null ? null : HOURS[action.hours] });
      return;
    case 'location':
      await update(tenant, `/v3/location/${w.locationId}`, { weeklyAvailability: action.hours === null ? null : HOURS[action.hours] });
      return;
    case 'booking':
      await insertBooking(w, w.serviceIds[action.service], w.resourceIds[action.resource], at(plusDays(start, action.offset), `${String(action.hour).padStart(2, '0')}:00`));
      await update(tenant, `/v3/resource/${w.resourceIds[action.resource]}`, {});
      return;
    case 'block': {
      const when = at(plusDays(start, action.offset), `${String(action.hour).padStart(2, '0')}:30`);
      if (action.scope === 'location') {
        await insertBlockOf(w, { locationId: w.locationId }, when);
        await update(tenant, `/v3/location/${w.locationId}`, {});
      } else if (action.scope === 'service') {
        await insertBlockOf(w, { serviceId: w.serviceIds[action.which] }, when);
        await update(tenant, `/v3/service/${w.serviceIds[action.which]}`, {});
      } else {
        await insertBlockOf(w, { resourceId: w.resourceIds[action.which] }, when);
        await update(tenant, `/v3/resource/${w.resourceIds[action.which]}`, {});
      }
      return;
    }
  }
}

describe('the cache never changes an answer', () => {
  test('the reference instance really computes every search (its answers follow direct inserts)', async () => {
    const w = await world();
    const date = monday();
    const query = { ServiceId: w.serviceIds[0], startDate: date };
    const before = await searchOn(reference, w, query);
    await insertBlockOf(w, { locationId: w.locationId }, at(date, '09:00'));
    const afterInsert = await searchOn(reference, w, query);
    assert.equal(before.body.availableTimes.length, 8);
    assert.equal(afterInsert.body.availableTimes.length, 7);
  });

  test('random writes interleaved with searches: every cached answer equals the uncached one', async () => {
    const w = await world();
    const start = monday();
    await fc.assert(
      fc.asyncProperty(fc.array(anyAction, { minLength: 1, maxLength: 5 }), async (actions) => {
        for (const action of actions) await apply(w, start, action);
        // Every run ends with a search, from both instances.
        await apply(w, start, { kind: 'search', service: 0, offset: 0, span: 1, roundRobin: undefined, resources: 'all', twice: true });
      }),
      { numRuns: 15, endOnFailure: true },
    );
  });
});

describe('writes show at once', () => {
  test('a padding change by PUT shows in the very next search', async () => {
    const w = await world();
    const date = monday();
    await update(w.tenant, `/v3/location/${w.locationId}`, { weeklyAvailability: { mon: [{ start: '09:00', end: '12:00' }] } });
    const query = { ServiceId: w.serviceIds[0], startDate: date };
    const first = await searchOn(context.app, w, query);
    assert.deepEqual(localTimes(first.body), ['Mon 09:00', 'Mon 10:00', 'Mon 11:00']);
    assert.deepEqual(await searchOn(context.app, w, query), first);

    await update(w.tenant, `/v3/service/${w.serviceIds[0]}`, { padding: 30 });
    // 11:00-12:00 plus 30 minutes of padding no longer fits before 12:00.
    assert.deepEqual(localTimes((await searchOn(context.app, w, query)).body), ['Mon 09:00', 'Mon 10:00']);

    await update(w.tenant, `/v3/service/${w.serviceIds[0]}`, { bookingsPerSlot: 3 });
    assert.deepEqual((await searchOn(context.app, w, query)).body.availableTimes.map((s: Slot) => s.remaining), [6, 6]);

    await update(w.tenant, `/v3/resource/${w.resourceIds[0]}`, { weeklyAvailability: { mon: [{ start: '10:00', end: '12:00' }] } });
    const narrowed = (await searchOn(context.app, w, query)).body as Availability;
    assert.deepEqual(narrowed.availableTimes.map((s) => s.resourceIds), [[w.resourceIds[1]], [...w.resourceIds].sort()]);

    await update(w.tenant, `/v3/location/${w.locationId}`, { weeklyAvailability: { mon: [{ start: '10:00', end: '17:00' }] } });
    assert.deepEqual(localTimes((await searchOn(context.app, w, query)).body), ['Mon 10:00', 'Mon 11:00', 'Mon 12:00', 'Mon 13:00', 'Mon 14:00', 'Mon 15:00']);
  });

  test('archiving a resource takes it out of the next search', async () => {
    const w = await world();
    const date = monday();
    const query = { ServiceId: w.serviceIds[0], startDate: date };
    const first = (await searchOn(context.app, w, query)).body as Availability;
    assert.deepEqual(first.availableTimes[0]!.resourceIds, [...w.resourceIds].sort());
    const archived = await context.app.inject({ method: 'DELETE', url: `/v3/resource/${w.resourceIds[0]}`, headers: w.tenant.dashboard });
    assert.equal(archived.statusCode, 204, archived.body);
    const second = (await searchOn(context.app, w, query)).body as Availability;
    assert.deepEqual(second.availableTimes[0]!.resourceIds, [w.resourceIds[1]]);
  });

  test('with Redis, a second instance sees the first instance\'s writes at once', { skip: !process.env.TEST_REDIS_URL }, async () => {
    const other = await buildApp({ config: context.config, database: context.database, secrets: TEST_SECRETS, redis: context.redis });
    try {
      const w = await world();
      const date = monday();
      const query = { ServiceId: w.serviceIds[0], startDate: date };
      const before = await searchOn(other, w, query);
      assert.equal(before.body.availableTimes.length, 8);
      assert.deepEqual(await searchOn(other, w, query), before);
      await update(w.tenant, `/v3/location/${w.locationId}`, { weeklyAvailability: { mon: [{ start: '13:00', end: '17:00' }] } });
      assert.deepEqual(localTimes((await searchOn(other, w, query)).body), ['Mon 13:00', 'Mon 14:00', 'Mon 15:00', 'Mon 16:00']);
    } finally {
      await other.close();
    }
  });
});

describe('compressed answers', () => {
  test('a cached answer goes to a client that accepts gzip as gzip bytes of the same JSON; any other client gets the text', async () => {
    const w = await world();
    const url = availabilityUrl(w, { ServiceId: w.serviceIds[0], startDate: monday(), endDate: plusDays(monday(), 6) });
    const get = (acceptEncoding?: string) =>
      context.app.inject({ method: 'GET', url, headers: { ...w.tenant.dashboard, ...(acceptEncoding !== undefined ? { 'accept-encoding': acceptEncoding } : {}) } });
    // The first search is computed and sent as text, whatever the client accepts.
    const computed = await get('gzip, deflate, br');
    assert.equal(computed.statusCode, 200, computed.body);
    assert.equal(computed.headers['content-encoding'], undefined);
    assert.equal(computed.headers.vary, 'Accept-Encoding');
    const text = computed.body;
    assert.ok(JSON.parse(text).availableTimes.length > 0);

    const compressed = await get('gzip, deflate, br');
    assert.equal(compressed.statusCode, 200);
    assert.equal(compressed.headers['content-encoding'], 'gzip');
    assert.equal(compressed.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(compressed.headers.vary, 'Accept-Encoding');
    assert.equal(gunzipSync(compressed.rawPayload).toString('utf8'), text);
    assert.ok(compressed.rawPayload.length < text.length / 4, `${compressed.rawPayload.length} bytes compressed of ${text.length}`);

    // gzip refused by name wins over `*` (RFC 9110 12.5.3): such a client never gets gzip.
    for (const acceptEncoding of [undefined, '', 'identity', 'br', 'gzip;q=0, identity', 'gzip;q=0.5, identity', '*;q=0.5, gzip;q=0', 'gzip;q=abc']) {
      const plain = await get(acceptEncoding);
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers['content-encoding'], undefined, String(acceptEncoding));
      assert.equal(plain.body, text, String(acceptEncoding));
    }
    // `*` takes any encoding, and content codings are names in any case: gzip.
    for (const acceptEncoding of ['*', 'identity;q=0, *', 'GZIP']) assert.equal((await get(acceptEncoding)).headers['content-encoding'], 'gzip', acceptEncoding);
  });

  test('the process cache keeps a small answer, and its gzip bytes, in buffers of their own, not slices of the shared pool', async () => {
    const cache = createMemoryAvailabilityCache();
    const key = await cache.keyFor('c', { services: ['s'] }, { search: 'small' });
    // Buffer.from of a short text is a slice of Node.js's 8 KB pool, as a compact answer's is.
    const body = Buffer.from('{"timezoneName":"UTC","resources":[],"availableTimes":[],"availableDays":[]}');
    assert.ok(body.buffer.byteLength > body.length * 2, 'the test body is a pool slice');
    await cache.set(key, body);
    const cached = (await cache.get(key))!;
    assert.ok(cached.bytes().equals(body));
    assert.equal(cached.bytes().buffer.byteLength, body.length);
    assert.equal(cached.gzip.buffer.byteLength, cached.gzip.length);
    assert.equal(gunzipSync(cached.gzip).toString('utf8'), body.toString('utf8'));
    await cache.close();
  });

  test('closing the cache waits for answers still being compressed and stored, so Redis is not closed under them', async () => {
    let stored = false;
    const redis = {
      status: 'ready',
      set: async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        stored = true;
        return 'OK';
      },
    } as unknown as Redis;
    const cache = createRedisAvailabilityCache(createRedisGuard(redis, { timeoutMs: 1000, breakerFailures: 3, breakerCooldownMs: 1000 }));
    void cache.set('slotwise:az:c:k', Buffer.from(JSON.stringify({ availableTimes: 'x'.repeat(100_000) })));
    await cache.close();
    assert.equal(stored, true);
  });
});

test('a stored value that is not gzip is a miss, told to onError, not an answer', async () => {
  const errors: string[] = [];
  const values: Record<string, Buffer> = { 'slotwise:az:c:text': Buffer.from('{"availableTimes":[]}'), 'slotwise:az:c:empty': Buffer.alloc(0) };
  const redis = { status: 'ready', getBuffer: async (key: string) => values[key] ?? null } as unknown as Redis;
  const cache = createRedisAvailabilityCache(createRedisGuard(redis, { timeoutMs: 1000, breakerFailures: 3, breakerCooldownMs: 1000 }), (error, operation) =>
    errors.push(`${operation}: ${(error as Error).message}`),
  );
  assert.equal(await cache.get('slotwise:az:c:text'), null);
  assert.equal(await cache.get('slotwise:az:c:empty'), null);
  assert.deepEqual(errors, ['get: not a gzip stream at slotwise:az:c:text', 'get: not a gzip stream at slotwise:az:c:empty']);
  values['slotwise:az:c:gzip'] = Buffer.from([0x1f, 0x8b, 0x08]);
  assert.ok(await cache.get('slotwise:az:c:gzip'));
});

describe('cache keys', () => {
  /** A memory cache that records keys and counts hits. */
  function spyCache() {
    const inner = createMemoryAvailabilityCache();
    const spy = { hits: 0, keys: [] as string[] };
    const cache: AvailabilityCache = {
      touch: (companyId, entities) => inner.touch(companyId, entities),
      async keyFor(companyId, entities, searchKey) {
        const key = await inner.keyFor(companyId, entities, searchKey);
        spy.keys.push(key);
        return key;
      },
      async get(key) {
        const value = await inner.get(key);
        if (value !== null) spy.hits++;
        return value;
      },
      set: (key, value) => inner.set(key, value),
      close: () => inner.close(),
    };
    return { cache, spy };
  }

  test('a write to another service keeps this service\'s key (a hit); a write to this service changes it', async () => {
    const w = await world();
    const date = monday();
    const db = context.database.db;
    const { cache, spy } = spyCache();
    // The same factories the application wires, with a clock that stands still.
    const now = Date.now();
    const availability = createAvailabilityService({ db, repository: createAvailabilityRepository(db), cache, now: () => now });
    const services = createServiceService({
      db,
      repository: createServiceRepository(db),
      links: createCatalogLinks(db),
      companySummary: async (id) => ({ id, name: '' }),
      onSlotSettingsChanged: (companyId, id) => cache.touch(companyId, { services: [id] }),
    });
    const principal = { kind: 'machine' as const, companyId: w.tenant.companyId, clientId: 'test', scopes: ['read' as const, 'write' as const] };
    const run = () => availability.search(w.tenant.companyId, principal, { LocationId: w.locationId, ServiceId: w.serviceIds[0], startDate: date });

    const first = await run();
    assert.equal(spy.hits, 0);
    assert.equal(first.availableTimes.length, 8);
    assert.deepEqual(await run(), first);
    assert.equal(spy.hits, 1);

    await services.update(principal, w.serviceIds[1], { padding: 45 });
    await cache.touch(w.tenant.companyId, { resources: [randomUUID()], locations: [randomUUID()] });
    assert.deepEqual(await run(), first);
    assert.equal(spy.hits, 2, 'another service\'s write left the key alone');
    assert.equal(new Set(spy.keys).size, 1);

    await services.update(principal, w.serviceIds[0], { padding: 30, bookingInterval: 30 });
    const changed = await run();
    assert.equal(spy.hits, 2, 'this service\'s write made the old entry unreachable');
    assert.equal(new Set(spy.keys).size, 2);
    assert.notDeepEqual(changed, first);
    // 09:00-17:00 every 30 minutes, each needing 90 minutes: 09:00 to 15:30.
    assert.equal(changed.availableTimes.length, 14);

    // A resource of the search bumps it too.
    await cache.touch(w.tenant.companyId, { resources: [w.resourceIds[1]] });
    await run();
    assert.equal(spy.hits, 2);
    assert.equal(new Set(spy.keys).size, 3);
    await run();
    assert.equal(spy.hits, 3);
  });

  test('the key depends on the search: another date, resource or customer is another entry', async () => {
    const w = await world();
    const date = monday();
    const db = context.database.db;
    const { cache, spy } = spyCache();
    const now = Date.now();
    const availability = createAvailabilityService({ db, repository: createAvailabilityRepository(db), cache, now: () => now });
    const customer = await w.tenant.customer({ firstName: 'Ada' });
    const base = { LocationId: w.locationId, ServiceId: w.serviceIds[0], startDate: date };
    await availability.search(w.tenant.companyId, null, base);
    await availability.search(w.tenant.companyId, null, { ...base, startDate: plusDays(date, 1) });
    await availability.search(w.tenant.companyId, null, { ...base, ResourceIds: [w.resourceIds[0]] });
    await availability.search(w.tenant.companyId, null, { ...base, CustomerId: customer });
    await availability.search(w.tenant.companyId, null, { ...base, roundRobin: 'COMBINED' });
    assert.equal(spy.hits, 0);
    assert.equal(new Set(spy.keys).size, 5);
    // A booking for the customer is seen once its customer is touched (the appointment operations do that).
    await insertBooking(w, w.serviceIds[0], w.resourceIds[0], at(plusDays(date, 7), '09:00'));
    await context.database.db.updateTable('appointments').set({ customerId: customer }).where('companyId', '=', w.tenant.companyId).execute();
    await update(w.tenant, `/v3/service/${w.serviceIds[0]}`, { bookingLimit: 1 });
    await cache.touch(w.tenant.companyId, { services: [w.serviceIds[0]] });
    const limited = await availability.search(w.tenant.companyId, null, { ...base, CustomerId: customer });
    assert.deepEqual(limited.availableTimes, []);
    assert.equal(limited.availableDays[0]!.reason, 'customer booking limit reached');
  });
});

describe('Redis that does not answer', () => {
  test('never fails a search or a write: searches are computed and not stored, bumps are logged', async () => {
    const failing = new Error('connection refused');
    const reject = () => Promise.reject(failing);
    const redis = { status: 'ready', incr: reject, mget: reject, get: reject, set: reject } as unknown as Redis;
    const errors: string[] = [];
    const guard = createRedisGuard(redis, { timeoutMs: 100, breakerFailures: 100, breakerCooldownMs: 5000 });
    const cache = createRedisAvailabilityCache(guard, (error, operation) => errors.push(`${operation}: ${(error as Error).message}`));
    await cache.touch('c', { services: ['s'] });
    const key = await cache.keyFor('c', { services: ['s'] }, { search: 1 });
    assert.equal(await cache.get(key), null);
    await cache.set(key, Buffer.from('{}'));
    assert.deepEqual(errors, ['touch: connection refused', 'keyFor: connection refused']);
  });
});
