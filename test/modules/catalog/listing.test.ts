import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Kind = 'location' | 'service' | 'resource' | 'customer';
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- records are checked field by field
type Row = Record<string, any> & { id: string };
interface PageBody {
  data: Row[];
  page: number;
  limit: number;
  total: number;
}

async function call(headers: Record<string, string>, method: Method, url: string, payload?: unknown): Promise<LightMyRequestResponse> {
  return context.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function create(tenant: Tenant, kind: Kind, payload: Record<string, unknown>): Promise<Row> {
  const response = await call(tenant.dashboard, 'POST', `/v3/${kind}`, payload);
  assert.equal(response.statusCode, 201, response.body);
  return json<Row>(response);
}

async function list(headers: Record<string, string>, path: string): Promise<PageBody> {
  const response = await call(headers, 'GET', path);
  assert.equal(response.statusCode, 200, response.body);
  return json<PageBody>(response);
}

async function read(tenant: Tenant, kind: Kind, id: string): Promise<Row> {
  const response = await call(tenant.dashboard, 'GET', `/v3/${kind}/${id}`);
  assert.equal(response.statusCode, 200, response.body);
  return json<Row>(response);
}

async function write(tenant: Tenant, method: 'PUT' | 'PATCH', kind: Kind, id: string, payload: Record<string, unknown>): Promise<Row> {
  const response = await call(tenant.dashboard, method, `/v3/${kind}/${id}`, payload);
  assert.equal(response.statusCode, 200, response.body);
  return json<Row>(response);
}

function assertQueryInvalid(response: LightMyRequestResponse, path: string) {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(body.message, 'Validation Error');
  assert.equal(body.errors.length, 1, response.body);
  assert.equal(body.errors[0].type, 'field');
  assert.equal(body.errors[0].location, 'query');
  assert.equal(body.errors[0].path, path);
}

function assertNotFound(response: LightMyRequestResponse) {
  assert.equal(response.statusCode, 404, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(body.errors, []);
}

const names = (rows: Row[]) => rows.map((r) => r.name as string);
const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
const pad = (n: number) => String(n).padStart(2, '0');

const minimal: Record<Exclude<Kind, 'customer'>, (n: number) => Record<string, unknown>> = {
  location: (n) => ({ name: `L${pad(n)}`, timezoneName: 'Europe/London' }),
  service: (n) => ({ name: `S${pad(n)}`, duration: 30 }),
  resource: (n) => ({ name: `R${pad(n)}` }),
};

/**
 * Seeds `count` live records of a kind straight into the database (one statement, so paging tests
 * stay fast on the embedded database); names sort in creation order. Creation itself is tested in
 * validation.test.ts.
 */
async function seed(tenant: Tenant, kind: Exclude<Kind, 'customer'>, count: number, first = 1): Promise<Array<{ id: string; name: string }>> {
  const rows = Array.from({ length: count }, (_, i) => ({ companyId: tenant.companyId, id: randomUUID(), name: minimal[kind](first + i).name as string }));
  const db = context.database.db;
  if (kind === 'location') await db.insertInto('locations').values(rows.map((r) => ({ ...r, timezoneName: 'Europe/London' }))).execute();
  if (kind === 'service') await db.insertInto('services').values(rows.map((r) => ({ ...r, duration: 30 }))).execute();
  if (kind === 'resource') await db.insertInto('resources').values(rows).execute();
  return rows.map(({ id, name }) => ({ id, name }));
}

describe('paging', () => {
  for (const kind of ['location', 'service', 'resource'] as const) {
    test(`/v3/${kind}s: default 20, page 2 has the rest, limit 500 is allowed and 501 is 400`, async () => {
      const tenant = await context.world.tenant();
      // Two through the API, the rest seeded.
      await create(tenant, kind, minimal[kind](1));
      await create(tenant, kind, minimal[kind](2));
      const expected = ['01', '02'].map((n) => `${kind[0]!.toUpperCase()}${n}`);
      expected.push(...(await seed(tenant, kind, 21, 3)).map((r) => r.name));

      const first = await list(tenant.dashboard, `/v3/${kind}s`);
      assert.deepEqual([first.page, first.limit, first.total, first.data.length], [1, 20, 23, 20]);
      assert.deepEqual(names(first.data), expected.slice(0, 20), 'ordered by name');
      const second = await list(tenant.dashboard, `/v3/${kind}s?page=2`);
      assert.deepEqual([second.page, second.limit, second.total], [2, 20, 23]);
      assert.deepEqual(names(second.data), expected.slice(20));
      const beyond = await list(tenant.dashboard, `/v3/${kind}s?page=3`);
      assert.deepEqual([beyond.data.length, beyond.total], [0, 23]);

      const all = await list(tenant.dashboard, `/v3/${kind}s?limit=500`);
      assert.deepEqual([all.limit, all.total, all.data.length], [500, 23, 23]);
      assert.deepEqual(names(all.data), expected);

      assertQueryInvalid(await call(tenant.dashboard, 'GET', `/v3/${kind}s?limit=501`), 'limit');
      assertQueryInvalid(await call(tenant.dashboard, 'GET', `/v3/${kind}s?limit=0`), 'limit');
      assertQueryInvalid(await call(tenant.dashboard, 'GET', `/v3/${kind}s?limit=ten`), 'limit');
      assertQueryInvalid(await call(tenant.dashboard, 'GET', `/v3/${kind}s?page=0`), 'page');

      // A machine token of the company sees the same list.
      const token = await machineToken(context.app, tenant);
      const machine = await list({ authorization: `Bearer ${token}` }, `/v3/${kind}s?limit=500`);
      assert.deepEqual(names(machine.data), expected);
    });
  }

  test('/v3/customers: default 20, page 2 has the rest, limit 100 is allowed and 101 is 400', async () => {
    const tenant = await context.world.tenant();
    const made: Row[] = [];
    for (let n = 1; n <= 23; n++) made.push(await create(tenant, 'customer', { firstName: 'Pat', lastName: `C${pad(n)}`, email: `c${n}@example.com` }));
    const first = await list(tenant.dashboard, '/v3/customers');
    assert.deepEqual([first.page, first.limit, first.total, first.data.length], [1, 20, 23, 20]);
    const second = await list(tenant.dashboard, '/v3/customers?page=2&limit=20');
    assert.deepEqual([second.page, second.total, second.data.length], [2, 23, 3]);
    assert.deepEqual(
      [...first.data, ...second.data].map((c) => c.id).sort(),
      made.map((c) => c.id).sort(),
    );
    const all = await list(tenant.dashboard, '/v3/customers?limit=100');
    assert.deepEqual([all.limit, all.total, all.data.length], [100, 23, 23]);
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/customers?limit=101'), 'limit');
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/customers?limit=500'), 'limit');
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/customers?page=0'), 'page');
  });

  test('stop paging when a page is shorter than the limit: every record once, whether or not the total divides evenly', async () => {
    const tenant = await context.world.tenant();
    const made = await seed(tenant, 'service', 12);
    for (const limit of [5, 4, 12, 13]) {
      const seen: string[] = [];
      const sizes: number[] = [];
      for (let page = 1; ; page++) {
        const body = await list(tenant.dashboard, `/v3/services?limit=${limit}&page=${page}`);
        assert.equal(body.total, 12);
        seen.push(...body.data.map((r) => r.id));
        sizes.push(body.data.length);
        if (body.data.length < limit) break;
        assert.ok(page < 10, 'paging must end');
      }
      assert.deepEqual(seen, made.map((r) => r.id), `limit ${limit}`);
      assert.deepEqual(sizes, { 5: [5, 5, 2], 4: [4, 4, 4, 0], 12: [12, 0], 13: [12] }[limit], `limit ${limit}`);
    }
  });
});

/** A location with an address, a service offered there and a resource working there on it. */
async function smallCatalog(tenant: Tenant) {
  const location = await create(tenant, 'location', {
    name: 'Central',
    timezoneName: 'Europe/London',
    address: { addressLine1: '1 High Street', city: 'London', postalCode: 'EC1A 1AA', country: 'GB' },
    phone: '02071234567',
  });
  const service = await create(tenant, 'service', { name: 'Haircut', duration: 45, locationIds: [location.id] });
  const resource = await create(tenant, 'resource', { name: 'Sam', locationIds: [location.id], serviceIds: [service.id] });
  return { location, service, resource };
}

describe('include and the full graph', () => {
  test('locations: list objects omit address, company, services and resources unless include names them', async () => {
    const tenant = await context.world.tenant({ name: `Include Co ${randomUUID()}` });
    const { location, service, resource } = await smallCatalog(tenant);
    const company = { id: tenant.companyId, name: (await read(tenant, 'location', location.id)).company.name };
    assert.match(company.name, /^Include Co /);

    const [plain] = (await list(tenant.dashboard, '/v3/locations')).data;
    for (const key of ['address', 'company', 'services', 'resources']) assert.equal(key in plain!, false, `${key} absent`);
    assert.deepEqual([plain!.id, plain!.name, plain!.timezoneName, plain!.phone, plain!.companyId], [location.id, 'Central', 'Europe/London', '02071234567', tenant.companyId]);

    const [linked] = (await list(tenant.dashboard, '/v3/locations?include=services,resources')).data;
    assert.deepEqual(linked!.services, [{ id: service.id, name: 'Haircut' }]);
    assert.deepEqual(linked!.resources, [{ id: resource.id, name: 'Sam' }]);
    assert.equal('address' in linked!, false);
    assert.equal('company' in linked!, false);

    const [withCompany] = (await list(tenant.dashboard, '/v3/locations?include=company')).data;
    assert.deepEqual(withCompany!.company, company);
    assert.equal('services' in withCompany!, false);

    const [withAddress] = (await list(tenant.dashboard, '/v3/locations?include=address')).data;
    assert.deepEqual(withAddress!.address, location.address);
  });

  test('services: list objects omit company, locations and resources unless include names them', async () => {
    const tenant = await context.world.tenant();
    const { location, service, resource } = await smallCatalog(tenant);
    const [plain] = (await list(tenant.dashboard, '/v3/services')).data;
    for (const key of ['company', 'locations', 'resources']) assert.equal(key in plain!, false, `${key} absent`);
    assert.deepEqual(plain!.locationIds, [location.id]);
    assert.equal(plain!.id, service.id);

    const [linked] = (await list(tenant.dashboard, '/v3/services?include=locations,resources')).data;
    assert.deepEqual(linked!.locations, [{ id: location.id, name: 'Central' }]);
    assert.deepEqual(linked!.resources, [{ id: resource.id, name: 'Sam' }]);
    assert.equal('company' in linked!, false);

    const [withCompany] = (await list(tenant.dashboard, '/v3/services?include=company')).data;
    assert.deepEqual(Object.keys(withCompany!.company).sort(), ['id', 'name']);
    assert.equal(withCompany!.company.id, tenant.companyId);
    assert.equal('locations' in withCompany!, false);
  });

  test('resources: list objects omit company, locations and services unless include names them', async () => {
    const tenant = await context.world.tenant();
    const { location, service, resource } = await smallCatalog(tenant);
    const [plain] = (await list(tenant.dashboard, '/v3/resources')).data;
    for (const key of ['company', 'locations', 'services']) assert.equal(key in plain!, false, `${key} absent`);
    assert.deepEqual([plain!.id, plain!.locationIds, plain!.serviceIds], [resource.id, [location.id], [service.id]]);

    const [linked] = (await list(tenant.dashboard, '/v3/resources?include=locations,services')).data;
    assert.deepEqual(linked!.locations, [{ id: location.id, name: 'Central' }]);
    assert.deepEqual(linked!.services, [{ id: service.id, name: 'Haircut' }]);
    assert.equal('company' in linked!, false);

    const [all] = (await list(tenant.dashboard, '/v3/resources?include=company,locations,services')).data;
    assert.equal(all!.company.id, tenant.companyId);
    assert.equal(all!.locations.length, 1);
    assert.equal(all!.services.length, 1);
  });

  test('an unknown include name is 400 on query path include', async () => {
    const tenant = await context.world.tenant();
    for (const url of [
      '/v3/locations?include=bogus',
      '/v3/locations?include=services,bogus',
      '/v3/locations?include=locations',
      '/v3/services?include=services',
      '/v3/services?include=locations,',
      '/v3/resources?include=resources',
      '/v3/resources?include=company,owners',
    ]) {
      assertQueryInvalid(await call(tenant.dashboard, 'GET', url), 'include');
    }
  });

  test('single reads and writes return the full graph: address, company {id, name} and linked records', async () => {
    const tenant = await context.world.tenant();
    const { location, service, resource } = await smallCatalog(tenant);
    const other = await create(tenant, 'resource', { name: 'Alex', locationIds: [location.id] });

    const loc = await read(tenant, 'location', location.id);
    assert.deepEqual(loc.address, { addressLine1: '1 High Street', city: 'London', postalCode: 'EC1A 1AA', country: 'GB' });
    assert.deepEqual(Object.keys(loc.company).sort(), ['id', 'name']);
    assert.equal(loc.company.id, tenant.companyId);
    assert.deepEqual(loc.services, [{ id: service.id, name: 'Haircut' }]);
    assert.deepEqual(loc.resources, [
      { id: other.id, name: 'Alex' },
      { id: resource.id, name: 'Sam' },
    ]);

    const svc = await read(tenant, 'service', service.id);
    assert.deepEqual(svc.company, loc.company);
    assert.deepEqual(svc.locations, [{ id: location.id, name: 'Central' }]);
    assert.deepEqual(svc.resources, [{ id: resource.id, name: 'Sam' }]);
    assert.deepEqual(svc.locationIds, [location.id]);

    const res = await read(tenant, 'resource', resource.id);
    assert.deepEqual(res.company, loc.company);
    assert.deepEqual(res.locations, [{ id: location.id, name: 'Central' }]);
    assert.deepEqual(res.services, [{ id: service.id, name: 'Haircut' }]);

    // Create and update answers carry the same graph as a read.
    assert.deepEqual(location.company, loc.company);
    assert.deepEqual(resource.services, res.services);
    const renamed = await write(tenant, 'PUT', 'service', service.id, { description: 'Wash and cut' });
    assert.deepEqual(renamed.resources, svc.resources);
    assert.deepEqual(renamed.locations, svc.locations);
    assert.deepEqual(renamed.company, svc.company);
  });
});

describe('archiving and other companies', () => {
  const samples: Record<Kind, Record<string, unknown>> = {
    location: { name: 'Archive Me', timezoneName: 'Europe/Berlin' },
    service: { name: 'Archive Me', duration: 20 },
    resource: { name: 'Archive Me' },
    customer: { firstName: 'Archive', lastName: 'Me', email: 'archive.me@example.com' },
  };
  const updates: Record<Kind, Record<string, unknown>> = {
    location: { name: 'Changed' },
    service: { name: 'Changed' },
    resource: { name: 'Changed' },
    customer: { firstName: 'Changed' },
  };

  for (const kind of ['location', 'service', 'resource', 'customer'] as const) {
    test(`${kind}: DELETE archives (204); then GET, PUT, PATCH and DELETE give 404 and lists omit it`, async () => {
      const tenant = await context.world.tenant();
      const keep = await create(tenant, kind, kind === 'customer' ? { ...samples.customer, email: 'keep@example.com' } : { ...samples[kind], name: 'Keep' });
      const gone = await create(tenant, kind, samples[kind]);
      assert.equal((await list(tenant.dashboard, `/v3/${kind}s`)).total, 2);

      const deleted = await call(tenant.dashboard, 'DELETE', `/v3/${kind}/${gone.id}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal(deleted.body, '');

      assertNotFound(await call(tenant.dashboard, 'GET', `/v3/${kind}/${gone.id}`));
      assertNotFound(await call(tenant.dashboard, 'PUT', `/v3/${kind}/${gone.id}`, updates[kind]));
      assertNotFound(await call(tenant.dashboard, 'PATCH', `/v3/${kind}/${gone.id}`, updates[kind]));
      assertNotFound(await call(tenant.dashboard, 'DELETE', `/v3/${kind}/${gone.id}`));

      const after = await list(tenant.dashboard, `/v3/${kind}s`);
      assert.equal(after.total, 1);
      assert.deepEqual(after.data.map((r) => r.id), [keep.id]);
      assert.equal((await read(tenant, kind, keep.id)).id, keep.id);
    });

    test(`${kind}: another company's id in the path is 404 for GET, PUT, PATCH and DELETE, and the record stays`, async () => {
      const owner = await context.world.tenant();
      const stranger = await context.world.tenant();
      const record = await create(owner, kind, samples[kind]);
      const before = await read(owner, kind, record.id);

      assertNotFound(await call(stranger.dashboard, 'GET', `/v3/${kind}/${record.id}`));
      assertNotFound(await call(stranger.dashboard, 'PUT', `/v3/${kind}/${record.id}`, updates[kind]));
      assertNotFound(await call(stranger.dashboard, 'PATCH', `/v3/${kind}/${record.id}`, updates[kind]));
      assertNotFound(await call(stranger.dashboard, 'DELETE', `/v3/${kind}/${record.id}`));
      const token = await machineToken(context.app, stranger);
      assertNotFound(await call({ authorization: `Bearer ${token}` }, 'GET', `/v3/${kind}/${record.id}`));

      assert.deepEqual(await read(owner, kind, record.id), before);
      assert.equal((await list(stranger.dashboard, `/v3/${kind}s`)).total, 0);
      // An id that was never created is 404 as well.
      assertNotFound(await call(owner.dashboard, 'GET', `/v3/${kind}/${randomUUID()}`));
    });
  }

  test('archived locations and services drop out of the links of the records that remain', async () => {
    const tenant = await context.world.tenant();
    const { location, service, resource } = await smallCatalog(tenant);
    const second = await create(tenant, 'location', { name: 'Annex', timezoneName: 'Europe/London' });
    await write(tenant, 'PUT', 'service', service.id, { locationIds: [location.id, second.id] });
    await write(tenant, 'PUT', 'resource', resource.id, { locationIds: [location.id, second.id] });

    assert.equal((await call(tenant.dashboard, 'DELETE', `/v3/location/${second.id}`)).statusCode, 204);
    const svc = await read(tenant, 'service', service.id);
    assert.deepEqual([svc.locationIds, svc.locations], [[location.id], [{ id: location.id, name: 'Central' }]]);
    const res = await read(tenant, 'resource', resource.id);
    assert.deepEqual(res.locationIds, [location.id]);

    assert.equal((await call(tenant.dashboard, 'DELETE', `/v3/service/${service.id}`)).statusCode, 204);
    const afterService = await read(tenant, 'resource', resource.id);
    assert.deepEqual([afterService.serviceIds, afterService.services], [[], []]);
    assert.deepEqual((await read(tenant, 'location', location.id)).services, []);

    assert.equal((await call(tenant.dashboard, 'DELETE', `/v3/resource/${resource.id}`)).statusCode, 204);
    assert.deepEqual((await read(tenant, 'location', location.id)).resources, []);
  });
});

describe('updates change only the given fields', () => {
  /** PUT then PATCH, each changing one field: everything else (but updatedAt) stays. */
  async function checkPartial(tenant: Tenant, kind: Kind, id: string, first: Record<string, unknown>, second: Record<string, unknown>) {
    const before = await read(tenant, kind, id);
    const afterPut = await write(tenant, 'PUT', kind, id, first);
    assert.deepEqual<Row>(afterPut, { ...before, ...first, updatedAt: afterPut.updatedAt });
    assert.deepEqual(await read(tenant, kind, id), afterPut);
    const afterPatch = await write(tenant, 'PATCH', kind, id, second);
    assert.deepEqual<Row>(afterPatch, { ...afterPut, ...second, updatedAt: afterPatch.updatedAt });
    assert.deepEqual(await read(tenant, kind, id), afterPatch);
    assert.ok(afterPatch.updatedAt >= before.updatedAt);
    assert.equal(afterPatch.createdAt, before.createdAt);
    return afterPatch;
  }

  test('location', async () => {
    const tenant = await context.world.tenant();
    const { location } = await smallCatalog(tenant);
    await write(tenant, 'PUT', 'location', location.id, { weeklyAvailability: { mon: [{ start: '09:00', end: '17:00' }] }, bookingTimerMinutes: 15, email: 'desk@example.com' });
    await checkPartial(tenant, 'location', location.id, { name: 'Central Renamed' }, { phone: '02079999999' });
    const cleared = await checkPartial(tenant, 'location', location.id, { address: null }, { weeklyAvailability: null });
    assert.equal(cleared.address, null);
    assert.equal(cleared.bookingTimerMinutes, 15);
    await checkPartial(tenant, 'location', location.id, {}, { timezoneName: 'America/Chicago' });
  });

  test('service, including its location links', async () => {
    const tenant = await context.world.tenant();
    const { location, service } = await smallCatalog(tenant);
    await write(tenant, 'PUT', 'service', service.id, {
      description: 'Cut',
      durationSelect: true,
      durationMin: 15,
      durationMax: 60,
      durationInterval: 15,
      bookAheadUnit: 'weeks',
      bookAheadValue: 4,
      bookInAdvance: 60,
      field3: 'blue',
      roundRobin: 'BALANCED',
      feeAmount: 25.5,
      weeklyAvailability: { tue: [{ start: '10:00', end: '18:00' }] },
    });
    const changed = await checkPartial(tenant, 'service', service.id, { name: 'Haircut Deluxe' }, { bookInAdvance: 120 });
    assert.deepEqual(changed.locationIds, [location.id]);
    assert.equal(changed.field3, 'blue');
    assert.equal(changed.feeAmount, 25.5);
    await checkPartial(tenant, 'service', service.id, { field3: 'green' }, { duration: 30 });
    const unlinked = await write(tenant, 'PATCH', 'service', service.id, { locationIds: [] });
    assert.deepEqual([unlinked.locationIds, unlinked.locations, unlinked.name], [[], [], 'Haircut Deluxe']);
  });

  test('resource, including its location and service links', async () => {
    const tenant = await context.world.tenant();
    const { location, service, resource } = await smallCatalog(tenant);
    await write(tenant, 'PUT', 'resource', resource.id, { email: 'sam@example.com', timezoneName: 'Europe/London', bookingLimit: 2 });
    const changed = await checkPartial(tenant, 'resource', resource.id, { name: 'Samantha' }, { phone: '07123456789' });
    assert.deepEqual([changed.locationIds, changed.serviceIds, changed.bookingLimit], [[location.id], [service.id], 2]);
    const noServices = await write(tenant, 'PUT', 'resource', resource.id, { serviceIds: [] });
    assert.deepEqual([noServices.locationIds, noServices.serviceIds, noServices.name], [[location.id], [], 'Samantha']);
  });

  test('customer', async () => {
    const tenant = await context.world.tenant();
    const customer = await create(tenant, 'customer', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '07123456789', notes: 'VIP', field1: 'a' });
    const changed = await checkPartial(tenant, 'customer', customer.id, { lastName: 'King' }, { email: 'ada.king@example.com' });
    assert.deepEqual([changed.firstName, changed.phone, changed.notes, changed.field1], ['Ada', '07123456789', 'VIP', 'a']);
  });
});

describe('list filters', () => {
  async function catalog(tenant: Tenant) {
    const north = await create(tenant, 'location', { name: 'North', timezoneName: 'Europe/London' });
    const south = await create(tenant, 'location', { name: 'South', timezoneName: 'Europe/London' });
    const both = await create(tenant, 'service', { name: 'Both', duration: 30, locationIds: [north.id, south.id] });
    const northOnly = await create(tenant, 'service', { name: 'North Only', duration: 30, locationIds: [north.id] });
    const nowhere = await create(tenant, 'service', { name: 'Nowhere', duration: 30 });
    const ann = await create(tenant, 'resource', { name: 'Ann', locationIds: [north.id], serviceIds: [both.id, northOnly.id] });
    const bob = await create(tenant, 'resource', { name: 'Bob', locationIds: [south.id], serviceIds: [both.id] });
    const cat = await create(tenant, 'resource', { name: 'Cat', locationIds: [north.id, south.id], serviceIds: [] });
    return { north, south, both, northOnly, nowhere, ann, bob, cat };
  }

  test('GET /v3/services?LocationId= lists the services offered there', async () => {
    const tenant = await context.world.tenant();
    const c = await catalog(tenant);
    assert.deepEqual(names((await list(tenant.dashboard, '/v3/services')).data), ['Both', 'North Only', 'Nowhere']);
    const north = await list(tenant.dashboard, `/v3/services?LocationId=${c.north.id}`);
    assert.deepEqual([names(north.data), north.total], [['Both', 'North Only'], 2]);
    const south = await list(tenant.dashboard, `/v3/services?LocationId=${c.south.id}&include=locations`);
    assert.deepEqual(names(south.data), ['Both']);
    assert.deepEqual(south.data[0]!.locations, [c.north, c.south].map((l) => ({ id: l.id, name: l.name })).sort(byName));
    const paged = await list(tenant.dashboard, `/v3/services?LocationId=${c.north.id}&limit=1&page=2`);
    assert.deepEqual([names(paged.data), paged.total], [['North Only'], 2]);
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/services?LocationId=north'), 'LocationId');
  });

  test('GET /v3/resources?LocationId=&ServiceId= filters by location, by service and by both', async () => {
    const tenant = await context.world.tenant();
    const c = await catalog(tenant);
    const at = async (query: string) => names((await list(tenant.dashboard, `/v3/resources?${query}`)).data);
    assert.deepEqual(await at(''), ['Ann', 'Bob', 'Cat']);
    assert.deepEqual(await at(`LocationId=${c.north.id}`), ['Ann', 'Cat']);
    assert.deepEqual(await at(`LocationId=${c.south.id}`), ['Bob', 'Cat']);
    assert.deepEqual(await at(`ServiceId=${c.both.id}`), ['Ann', 'Bob']);
    assert.deepEqual(await at(`ServiceId=${c.northOnly.id}`), ['Ann']);
    assert.deepEqual(await at(`ServiceId=${c.nowhere.id}`), []);
    assert.deepEqual(await at(`LocationId=${c.south.id}&ServiceId=${c.both.id}`), ['Bob']);
    assert.deepEqual(await at(`LocationId=${c.south.id}&ServiceId=${c.northOnly.id}`), []);
    const counted = await list(tenant.dashboard, `/v3/resources?LocationId=${c.north.id}&limit=1`);
    assert.deepEqual([counted.total, counted.data.length], [2, 1]);
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/resources?ServiceId=nope'), 'ServiceId');
    assertQueryInvalid(await call(tenant.dashboard, 'GET', '/v3/resources?LocationId=nope'), 'LocationId');
  });

  test('a filter id that is not the company\'s is 400 naming the value, never a list or a 404', async () => {
    const tenant = await context.world.tenant();
    const stranger = await context.world.tenant();
    await catalog(tenant);
    const theirs = await catalog(stranger);
    const unknown = randomUUID();
    for (const [url, path, value] of [
      [`/v3/services?LocationId=${theirs.north.id}`, 'LocationId', theirs.north.id],
      [`/v3/services?LocationId=${unknown}`, 'LocationId', unknown],
      [`/v3/resources?LocationId=${theirs.south.id}`, 'LocationId', theirs.south.id],
      [`/v3/resources?ServiceId=${theirs.both.id}`, 'ServiceId', theirs.both.id],
      [`/v3/resources?ServiceId=${unknown}`, 'ServiceId', unknown],
    ] as const) {
      const response = await call(tenant.dashboard, 'GET', url);
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      const body = json(response);
      assert.equal(body.success, false);
      assert.ok(body.message.includes(value), `message names ${value}: ${body.message}`);
      assert.deepEqual(body.errors.map((e: { location: string; path: string }) => [e.location, e.path]), [['query', path]]);
    }
  });
});
