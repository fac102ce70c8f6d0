// Dashboard roles 1-5 of the specification (the specification, Authentication) over the catalog,
// as a table: for each route, the status every kind of dashboard user gets.
//   Owner, Admin, User: the whole catalog (User: no user management);
//   Resource: a Resource-role user linked to resource 1 (at location 1, with service 1). Reads its
//     linked resource, its locations and its services only; may change its resource but not which
//     locations and services it serves; no customers; no catalog creation or deletion; company
//     reads without credential material;
//   Scoped: a User with locationAccessMode LOCATIONS and allowedLocationIds [location 1].
// Route `config.access` roles give 403 "Insufficient role: ..."; location scope gives 403 too.
// Read cells share one company that no cell changes; write cells run in a second company and
// write only to records made for the cell (or make harmless changes that no cell reads).
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { TenantFixture } from '../../helpers/world.js';

let context: TestContext;

const ROLES = ['Owner', 'Admin', 'User', 'Resource', 'Scoped'] as const;
type Who = (typeof ROLES)[number];
const label: Record<Who, string> = {
  Owner: 'Owner',
  Admin: 'Admin',
  User: 'User',
  Resource: 'Resource (linked to resource 1)',
  Scoped: 'User scoped to location 1',
};

interface World {
  tenant: TenantFixture;
  headers: Record<Who, Record<string, string>>;
  location1: string;
  location2: string;
  /** At location 1; provided by resource 1. */
  service1: string;
  /** At location 2; provided by resource 2. */
  service2: string;
  /** At both locations; provided by nobody. */
  serviceBoth: string;
  /** At location 1 with service 1: the Resource user's own. */
  resource1: string;
  /** At location 2 with service 2. */
  resource2: string;
  /** A colleague of resource 1: at location 1 with service 1 and the service at both locations. */
  resource3: string;
  customer: string;
  /** The User-role member's id (a harmless adjustUsers target). */
  userId: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
function call(method: Method, url: string, headers: Record<string, string>, payload?: Record<string, unknown>) {
  return context.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

const tag = () => randomUUID().slice(0, 8);
const owner = (world: World) => world.headers.Owner;
const newLocation = (world: World) => world.tenant.location({ name: `Location ${tag()}`, timezone: 'Europe/Paris' });
const newService = (world: World, locationIds: string[]) => world.tenant.service({ name: `Service ${tag()}`, duration: 30, locationIds });
const newResource = (world: World, locationIds: string[], serviceIds: string[]) => world.tenant.resource({ name: `Resource ${tag()}`, locationIds, serviceIds });
const newCustomer = (world: World) => world.tenant.customer({ firstName: `Customer ${tag()}`, email: uniqueEmail('customer') });

async function adjust(world: World, users: Array<Record<string, unknown>>) {
  const response = await call('POST', '/v3/users/adjustUsers', owner(world), { users });
  assert.equal(response.statusCode, 200, response.body);
}

async function newWorld(): Promise<World> {
  const tenant = await context.world.tenant();
  const headers = { Owner: tenant.dashboard } as Record<Who, Record<string, string>>;
  const world = { tenant, headers } as World;
  const [admin, user, resource, scoped] = await Promise.all([
    addMember(context, tenant, 'Admin'),
    addMember(context, tenant, 'User'),
    addMember(context, tenant, 'Resource'),
    addMember(context, tenant, 'User'),
  ]);
  Object.assign(headers, { Admin: admin.headers, User: user.headers, Resource: resource.headers, Scoped: scoped.headers });
  world.userId = user.userId;
  world.location1 = await newLocation(world);
  world.location2 = await newLocation(world);
  world.service1 = await newService(world, [world.location1]);
  world.service2 = await newService(world, [world.location2]);
  world.serviceBoth = await newService(world, [world.location1, world.location2]);
  world.resource1 = await newResource(world, [world.location1], [world.service1]);
  world.resource2 = await newResource(world, [world.location2], [world.service2]);
  world.resource3 = await newResource(world, [world.location1], [world.service1, world.serviceBoth]);
  world.customer = await newCustomer(world);
  // The Resource-role user gets its linked resource and the scoped user its location scope
  // through the users routes, as an Owner would.
  await adjust(world, [
    { id: resource.userId, role: 'Resource', linkedResourceId: world.resource1 },
    { id: scoped.userId, locationAccessMode: 'LOCATIONS', allowedLocationIds: [world.location1] },
  ]);
  return world;
}

let reads: World;
let writes: World;
before(async () => {
  context = await createTestContext();
  [reads, writes] = await Promise.all([newWorld(), newWorld()]);
});
after(() => context.close());

function assertForbidden(response: LightMyRequestResponse, message?: RegExp) {
  assert.equal(response.statusCode, 403, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.deepEqual(body.errors, []);
  if (message) assert.match(body.message, message);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
type Body = any;

/** Expected status per role; a 2xx may also carry a check of the body. */
type Expect = Record<Who, number>;
const ALL_OK: Expect = { Owner: 200, Admin: 200, User: 200, Resource: 200, Scoped: 200 };

interface Cell {
  name: string;
  expect: Expect;
  /** Runs the request as `who`; optional `check` of a successful body. */
  run(world: World, who: Who): Promise<LightMyRequestResponse>;
  check?(world: World, who: Who, body: Body): void;
  /** What every 403 of the cell says, when the cell pins it (the route's role check). */
  forbidden?: RegExp;
}

const ROLE_MESSAGE = /^Insufficient role: requires /;

const ids = (body: { data: Array<{ id: string }> }) => body.data.map((record) => record.id).sort();
const sorted = (...values: string[]) => [...values].sort();

function listCell(name: string, url: string, expect: Expect, visible: (world: World, who: Who) => string[]): Cell {
  return {
    name: `GET ${name}`,
    expect,
    run: (world, who) => call('GET', url, world.headers[who]),
    check: (world, who, body) => {
      assert.deepEqual(ids(body), sorted(...visible(world, who)));
      assert.equal(body.total, body.data.length);
    },
  };
}

function readCell(name: string, target: (world: World) => string, url: (id: string) => string, expect: Expect, forbidden?: RegExp): Cell {
  return {
    name: `GET ${name}`,
    expect,
    run: (world, who) => call('GET', url(target(world)), world.headers[who]),
    check: (world, _who, body) => assert.equal(body.id, target(world)),
    ...(forbidden ? { forbidden } : {}),
  };
}

const fullOrScoped = (full: (w: World) => string[], resource: (w: World) => string[], scoped: (w: World) => string[]) => (world: World, who: Who) =>
  who === 'Resource' ? resource(world) : who === 'Scoped' ? scoped(world) : full(world);

const summaryIds = (list: Array<{ id: string }>) => list.map((summary) => summary.id).sort();
// What nested graphs may name: a Resource-role user reads only its own resource and the services
// linked to it, so nested summaries of other resources and services are left out for it too.
const resourcesAtLocation1 = fullOrScoped((w) => [w.resource1, w.resource3], (w) => [w.resource1], (w) => [w.resource1, w.resource3]);
const servicesAtLocation1 = fullOrScoped((w) => [w.service1, w.serviceBoth], (w) => [w.service1], (w) => [w.service1, w.serviceBoth]);
const resourcesOfService1 = resourcesAtLocation1;

const READ_CELLS: Cell[] = [
  {
    name: 'GET /v3/location/:id (location 1): nested services and resources',
    expect: ALL_OK,
    run: (world, who) => call('GET', `/v3/location/${world.location1}`, world.headers[who]),
    check: (world, who, body) => {
      assert.deepEqual(summaryIds(body.resources), sorted(...resourcesAtLocation1(world, who)));
      assert.deepEqual(summaryIds(body.services), sorted(...servicesAtLocation1(world, who)));
    },
  },
  {
    name: 'GET /v3/locations?include=services,resources: nested services and resources of location 1',
    expect: ALL_OK,
    run: (world, who) => call('GET', '/v3/locations?include=services,resources', world.headers[who]),
    check: (world, who, body) => {
      const location1 = body.data.find((location: { id: string }) => location.id === world.location1);
      assert.deepEqual(summaryIds(location1.resources), sorted(...resourcesAtLocation1(world, who)));
      assert.deepEqual(summaryIds(location1.services), sorted(...servicesAtLocation1(world, who)));
    },
  },
  {
    name: 'GET /v3/service/:id (service 1): nested resources',
    expect: ALL_OK,
    run: (world, who) => call('GET', `/v3/service/${world.service1}`, world.headers[who]),
    check: (world, who, body) => assert.deepEqual(summaryIds(body.resources), sorted(...resourcesOfService1(world, who))),
  },
  {
    name: 'GET /v3/services?include=resources: nested resources of service 1',
    expect: ALL_OK,
    run: (world, who) => call('GET', '/v3/services?include=resources', world.headers[who]),
    check: (world, who, body) => {
      const service1 = body.data.find((service: { id: string }) => service.id === world.service1);
      assert.deepEqual(summaryIds(service1.resources), sorted(...resourcesOfService1(world, who)));
    },
  },
  listCell(
    '/v3/locations',
    '/v3/locations',
    ALL_OK,
    fullOrScoped((w) => [w.location1, w.location2], (w) => [w.location1], (w) => [w.location1]),
  ),
  readCell('/v3/location/:id (location 1)', (w) => w.location1, (id) => `/v3/location/${id}`, ALL_OK),
  readCell('/v3/location/:id (location 2)', (w) => w.location2, (id) => `/v3/location/${id}`, { ...ALL_OK, Resource: 403, Scoped: 403 }),
  listCell(
    '/v3/services',
    '/v3/services',
    ALL_OK,
    fullOrScoped((w) => [w.service1, w.service2, w.serviceBoth], (w) => [w.service1], (w) => [w.service1, w.serviceBoth]),
  ),
  {
    ...listCell(
      '/v3/services?LocationId=<location 2>',
      '',
      ALL_OK,
      fullOrScoped((w) => [w.service2, w.serviceBoth], () => [], () => []),
    ),
    run: (world, who) => call('GET', `/v3/services?LocationId=${world.location2}`, world.headers[who]),
  },
  readCell('/v3/service/:id (service 1, location 1)', (w) => w.service1, (id) => `/v3/service/${id}`, ALL_OK),
  readCell('/v3/service/:id (service 2, only at location 2)', (w) => w.service2, (id) => `/v3/service/${id}`, { ...ALL_OK, Resource: 403, Scoped: 403 }),
  readCell('/v3/service/:id (at both locations, not the linked resource\'s)', (w) => w.serviceBoth, (id) => `/v3/service/${id}`, { ...ALL_OK, Resource: 403 }),
  listCell(
    '/v3/resources',
    '/v3/resources',
    ALL_OK,
    fullOrScoped((w) => [w.resource1, w.resource2, w.resource3], (w) => [w.resource1], (w) => [w.resource1, w.resource3]),
  ),
  {
    ...listCell(
      '/v3/resources?LocationId=<location 2>',
      '',
      ALL_OK,
      fullOrScoped((w) => [w.resource2], () => [], () => []),
    ),
    run: (world, who) => call('GET', `/v3/resources?LocationId=${world.location2}`, world.headers[who]),
  },
  {
    ...listCell(
      '/v3/resources?ServiceId=<service 2>',
      '',
      ALL_OK,
      fullOrScoped((w) => [w.resource2], () => [], () => []),
    ),
    run: (world, who) => call('GET', `/v3/resources?ServiceId=${world.service2}`, world.headers[who]),
  },
  readCell('/v3/resource/:id (resource 1, the linked one)', (w) => w.resource1, (id) => `/v3/resource/${id}`, ALL_OK),
  readCell('/v3/resource/:id (resource 3, a colleague at location 1)', (w) => w.resource3, (id) => `/v3/resource/${id}`, { ...ALL_OK, Resource: 403 }),
  readCell(
    '/v3/resource/:id (resource 2)',
    (w) => w.resource2,
    (id) => `/v3/resource/${id}`,
    { ...ALL_OK, Resource: 403, Scoped: 403 },
  ),
  {
    ...listCell('/v3/customers', '/v3/customers', { ...ALL_OK, Resource: 403 }, (w) => [w.customer]),
    forbidden: ROLE_MESSAGE,
  },
  readCell('/v3/customer/:id', (w) => w.customer, (id) => `/v3/customer/${id}`, { ...ALL_OK, Resource: 403 }, ROLE_MESSAGE),
  {
    name: 'GET /v3/company (apiKeyPrefix only for Owner and Admin; never for Resource)',
    expect: ALL_OK,
    run: (world, who) => call('GET', '/v3/company', world.headers[who]),
    check: (world, who, body) => {
      assert.equal(body.id, world.tenant.companyId);
      assert.equal('apiKey' in body, false);
      if (who === 'Owner' || who === 'Admin') assert.equal(typeof body.apiKeyPrefix, 'string');
      if (who === 'Resource') assert.equal('apiKeyPrefix' in body, false, 'a Resource-role user sees no credential material');
    },
  },
  {
    name: 'GET /v3/users',
    expect: { Owner: 200, Admin: 200, User: 403, Resource: 403, Scoped: 403 },
    run: (world, who) => call('GET', '/v3/users', world.headers[who]),
    check: (_world, _who, body) => assert.equal(body.total, 5),
    forbidden: ROLE_MESSAGE,
  },
];

// Write cells. Each makes what it writes to; `body` changes nothing any other cell relies on.
const WRITE_CELLS: Cell[] = [
  {
    name: 'POST /v3/location',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 403 },
    run: (world, who) => call('POST', '/v3/location', world.headers[who], { name: `New ${tag()}`, timezoneName: 'Europe/Paris' }),
  },
  {
    name: 'PUT /v3/location/:id (location 1)',
    expect: { ...ALL_OK, Resource: 403 },
    forbidden: ROLE_MESSAGE,
    run: (world, who) => call('PUT', `/v3/location/${world.location1}`, world.headers[who], { phone: '5550100' }),
  },
  {
    name: 'PATCH /v3/location/:id (location 2)',
    expect: { ...ALL_OK, Resource: 403, Scoped: 403 },
    run: (world, who) => call('PATCH', `/v3/location/${world.location2}`, world.headers[who], { phone: '5550200' }),
  },
  {
    name: 'DELETE /v3/location/:id (a new location outside location 1)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 403 },
    run: async (world, who) => call('DELETE', `/v3/location/${await newLocation(world)}`, world.headers[who]),
  },
  {
    name: 'POST /v3/service at location 1',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 201 },
    run: (world, who) => call('POST', '/v3/service', world.headers[who], { name: `New ${tag()}`, duration: 30, locationIds: [world.location1] }),
    check: (world, _who, body) => assert.deepEqual(body.locationIds, [world.location1]),
  },
  {
    name: 'POST /v3/service at location 2 (outside the scope)',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 403 },
    run: (world, who) => call('POST', '/v3/service', world.headers[who], { name: `New ${tag()}`, duration: 30, locationIds: [world.location2] }),
  },
  {
    name: 'POST /v3/service at locations 1 and 2 (partly outside the scope)',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 403 },
    run: (world, who) =>
      call('POST', '/v3/service', world.headers[who], { name: `New ${tag()}`, duration: 30, locationIds: [world.location1, world.location2] }),
  },
  {
    name: 'POST /v3/service at no location',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 403 },
    run: (world, who) => call('POST', '/v3/service', world.headers[who], { name: `New ${tag()}`, duration: 30 }),
  },
  {
    name: 'PUT /v3/service/:id (a new service at location 1)',
    expect: { ...ALL_OK, Resource: 403 },
    forbidden: ROLE_MESSAGE,
    run: async (world, who) => call('PUT', `/v3/service/${await newService(world, [world.location1])}`, world.headers[who], { name: 'Renamed' }),
  },
  {
    name: 'PUT /v3/service/:id (a new service only at location 2)',
    expect: { ...ALL_OK, Resource: 403, Scoped: 403 },
    run: async (world, who) => call('PUT', `/v3/service/${await newService(world, [world.location2])}`, world.headers[who], { name: 'Renamed' }),
  },
  {
    name: 'PATCH /v3/service/:id moving a new service at location 1 to location 2',
    expect: { ...ALL_OK, Resource: 403, Scoped: 403 },
    run: async (world, who) =>
      call('PATCH', `/v3/service/${await newService(world, [world.location1])}`, world.headers[who], { locationIds: [world.location2] }),
  },
  {
    name: 'DELETE /v3/service/:id (a new service at location 1)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 204 },
    run: async (world, who) => call('DELETE', `/v3/service/${await newService(world, [world.location1])}`, world.headers[who]),
  },
  {
    name: 'DELETE /v3/service/:id (a new service only at location 2)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 403 },
    run: async (world, who) => call('DELETE', `/v3/service/${await newService(world, [world.location2])}`, world.headers[who]),
  },
  {
    name: 'POST /v3/resource at location 1',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 201 },
    run: (world, who) =>
      call('POST', '/v3/resource', world.headers[who], { name: `New ${tag()}`, locationIds: [world.location1], serviceIds: [world.service1] }),
  },
  {
    name: 'POST /v3/resource at location 2 (outside the scope)',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 403 },
    run: (world, who) => call('POST', '/v3/resource', world.headers[who], { name: `New ${tag()}`, locationIds: [world.location2] }),
  },
  {
    name: 'PUT /v3/resource/:id (resource 1, the linked one) changing its name',
    expect: ALL_OK,
    run: (world, who) => call('PUT', `/v3/resource/${world.resource1}`, world.headers[who], { name: `Resource one ${who}` }),
    check: (_world, who, body) => assert.equal(body.name, `Resource one ${who}`),
  },
  {
    name: 'PATCH /v3/resource/:id (resource 1, the linked one) changing its bookingLimit',
    expect: ALL_OK,
    run: (world, who) => call('PATCH', `/v3/resource/${world.resource1}`, world.headers[who], { bookingLimit: 2 }),
  },
  {
    name: 'PUT /v3/resource/:id (resource 1) with locationIds, even unchanged',
    expect: { ...ALL_OK, Resource: 403 },
    run: (world, who) => call('PUT', `/v3/resource/${world.resource1}`, world.headers[who], { locationIds: [world.location1] }),
  },
  {
    name: 'PUT /v3/resource/:id (resource 1) with serviceIds, even unchanged',
    expect: { ...ALL_OK, Resource: 403 },
    run: (world, who) => call('PUT', `/v3/resource/${world.resource1}`, world.headers[who], { serviceIds: [world.service1] }),
  },
  {
    name: 'PATCH /v3/resource/:id moving a new resource at location 1 to location 2',
    expect: { ...ALL_OK, Resource: 403, Scoped: 403 },
    run: async (world, who) =>
      call('PATCH', `/v3/resource/${await newResource(world, [world.location1], [])}`, world.headers[who], { locationIds: [world.location2] }),
  },
  {
    name: 'PUT /v3/resource/:id (resource 2)',
    expect: { ...ALL_OK, Resource: 403, Scoped: 403 },
    run: (world, who) => call('PUT', `/v3/resource/${world.resource2}`, world.headers[who], { bookingLimit: 3 }),
  },
  {
    name: 'DELETE /v3/resource/:id (a new resource at location 1)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 204 },
    run: async (world, who) => call('DELETE', `/v3/resource/${await newResource(world, [world.location1], [world.service1])}`, world.headers[who]),
  },
  {
    name: 'DELETE /v3/resource/:id (resource 1, the linked one)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 204 },
    // Only the Resource user deletes the real resource 1 (and is refused); the others a copy of it.
    run: async (world, who) =>
      call('DELETE', `/v3/resource/${who === 'Resource' ? world.resource1 : await newResource(world, [world.location1], [world.service1])}`, world.headers[who]),
    forbidden: ROLE_MESSAGE,
  },
  {
    name: 'POST /v3/customer',
    expect: { Owner: 201, Admin: 201, User: 201, Resource: 403, Scoped: 201 },
    forbidden: ROLE_MESSAGE,
    run: (world, who) => call('POST', '/v3/customer', world.headers[who], { firstName: 'New', email: uniqueEmail('customer') }),
  },
  {
    name: 'PUT /v3/customer/:id',
    expect: { ...ALL_OK, Resource: 403 },
    forbidden: ROLE_MESSAGE,
    run: (world, who) => call('PUT', `/v3/customer/${world.customer}`, world.headers[who], { phone: '5550300' }),
  },
  {
    name: 'DELETE /v3/customer/:id (a new customer)',
    expect: { Owner: 204, Admin: 204, User: 204, Resource: 403, Scoped: 204 },
    forbidden: ROLE_MESSAGE,
    run: async (world, who) => call('DELETE', `/v3/customer/${await newCustomer(world)}`, world.headers[who]),
  },
  {
    name: 'POST /v3/users/setUsers (a new User)',
    expect: { Owner: 200, Admin: 200, User: 403, Resource: 403, Scoped: 403 },
    forbidden: ROLE_MESSAGE,
    run: (world, who) => call('POST', '/v3/users/setUsers', world.headers[who], { users: [{ email: uniqueEmail('new'), role: 'User' }] }),
  },
  {
    name: 'POST /v3/users/adjustUsers (the User member, unchanged)',
    expect: { Owner: 200, Admin: 200, User: 403, Resource: 403, Scoped: 403 },
    forbidden: ROLE_MESSAGE,
    run: (world, who) => call('POST', '/v3/users/adjustUsers', world.headers[who], { users: [{ id: world.userId, locationAccessMode: 'COMPANY' }] }),
  },
];

function matrix(title: string, cells: Cell[], world: () => World) {
  describe(title, () => {
    for (const cell of cells) {
      for (const who of ROLES) {
        const status = cell.expect[who];
        test(`${label[who]}: ${cell.name} -> ${status}`, async () => {
          const response = await cell.run(world(), who);
          if (status === 403) {
            assertForbidden(response, cell.forbidden);
            return;
          }
          assert.equal(response.statusCode, status, response.body);
          if (status !== 204) cell.check?.(world(), who, json(response));
        });
      }
    }
  });
}

matrix('reads', READ_CELLS, () => reads);
matrix('writes', WRITE_CELLS, () => writes);

describe('after the writes', () => {
  test('the refused writes left resource 1 linked as it was, and the Resource user still reads it', async () => {
    const response = await call('GET', `/v3/resource/${writes.resource1}`, writes.headers.Resource);
    assert.equal(response.statusCode, 200, response.body);
    const resource = json(response);
    assert.deepEqual([resource.locationIds, resource.serviceIds], [[writes.location1], [writes.service1]]);
  });
});
