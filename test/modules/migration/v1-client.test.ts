import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import { V1SourceError, backoffMs, createV1Client } from '../../../src/modules/migration/v1-client.js';
import type { V1Client, V1ClientDeps } from '../../../src/modules/migration/v1-client.js';
import { V1_EXAMPLE_EXPORT, startV1StandIn } from '../../helpers/v1-stand-in.js';
import type { V1StandIn, V1StandInOptions } from '../../helpers/v1-stand-in.js';
import { freePort } from '../../helpers/ports.js';

// The v1 source reader against a local stand-in of the v1 API (test/helpers/v1-stand-in.ts),
// through the real OutboundFetch with loopback http allowed. Waits are recorded, never slept.

interface Harness {
  v1: V1StandIn;
  client: V1Client;
  waits: number[];
}

async function harness(t: TestContext, options: V1StandInOptions = {}, deps: Partial<V1ClientDeps> = {}, secret?: string): Promise<Harness> {
  const v1 = await startV1StandIn(options);
  t.after(() => v1.close());
  const waits: number[] = [];
  const client = createV1Client(
    { baseUrl: v1.baseUrl, tokenUrl: v1.tokenUrl, clientId: v1.clientId, clientSecret: secret ?? v1.clientSecret },
    {
      fetch: createOutboundFetch({ timeoutMs: 10_000, allowLoopbackHttp: true }),
      sleep: async (ms) => {
        waits.push(ms);
      },
      ...deps,
    },
  );
  return { v1, client, waits };
}

const apiRequests = (v1: V1StandIn) => v1.requests.filter((request) => request.path.startsWith('/setup/') || request.path.startsWith('/consumer/'));

async function rejectsWith(promise: Promise<unknown>, check: (error: V1SourceError) => void) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof V1SourceError, `expected a V1SourceError, got ${String(error)}`);
    check(error);
    return true;
  });
}

test('readExport returns the records of the v1-source.md §6 example by kind', async (t) => {
  const { client, waits } = await harness(t);
  const result = await client.readExport();
  assert.deepEqual(result.data, V1_EXAMPLE_EXPORT);
  assert.deepEqual(result.malformed, []);
  assert.deepEqual(waits, []);
});

test('the token is fetched once with the client credentials form and reused for every call', async (t) => {
  const clock = Date.UTC(2025, 0, 6, 12);
  const { v1, client } = await harness(t, {}, { now: () => clock });
  await client.readExport();
  assert.equal(v1.tokensIssued(), 1);
  const tokenRequests = v1.requests.filter((request) => request.path === '/connect/token');
  assert.equal(tokenRequests.length, 1);
  const form = new URLSearchParams(tokenRequests[0]!.body);
  assert.equal(form.get('grant_type'), 'client_credentials');
  assert.equal(form.get('client_id'), v1.clientId);
  assert.equal(form.get('client_secret'), v1.clientSecret);
  assert.equal(form.get('scope'), 'OnSchedApi');
  const api = apiRequests(v1);
  // locations; services, resources, service allocations of location 12; allocations and blocks of
  // 2 resources; customers and appointments of location 12
  assert.equal(api.length, 10);
  assert.equal(new Set(api.map((request) => request.authorization)).size, 1);
  assert.ok(api.every((request) => request.query.get('limit') === '100' && request.query.get('offset') === '0'));
  assert.deepEqual(
    api.map((request) => `${request.path}?${request.query.get('locationId') ?? ''}`),
    [
      '/setup/v1/locations?',
      '/setup/v1/services?12',
      '/setup/v1/resources?12',
      '/setup/v1/services/0/allocations?12',
      '/setup/v1/resources/1501/allocations?',
      '/setup/v1/resources/1501/blocks?',
      '/setup/v1/resources/1502/allocations?',
      '/setup/v1/resources/1502/blocks?',
      '/consumer/v1/customers?12',
      '/consumer/v1/appointments?12',
    ],
  );
  // Appointments from the day before today (UTC) on.
  assert.equal(api.at(-1)!.query.get('startDate'), '2025-01-05');
});

test('a token is fetched again shortly before it expires, and once after a 401', async (t) => {
  let clock = Date.UTC(2025, 0, 6, 12);
  const { v1, client } = await harness(t, { accessTokenSeconds: 3600 }, { now: () => clock });
  await client.list('/setup/v1/locations');
  clock += 3_000_000; // 50 min: still valid
  await client.list('/setup/v1/locations');
  assert.equal(v1.tokensIssued(), 1);
  clock += 560_000; // 59 min 20 s: within the last minute
  await client.list('/setup/v1/locations');
  assert.equal(v1.tokensIssued(), 2);

  v1.revokeTokens();
  const { records } = await client.list('/setup/v1/locations');
  assert.equal(records.length, 1);
  assert.equal(v1.tokensIssued(), 3);
  assert.deepEqual(apiRequests(v1).map((request) => request.status), [200, 200, 200, 401, 200]);
});

test('a wrong client secret fails with a V1SourceError that names the credentials, without retries', async (t) => {
  const { v1, client, waits } = await harness(t, {}, {}, 'not-the-secret');
  await rejectsWith(client.readExport(), (error) => {
    assert.equal(error.status, 401);
    assert.equal(error.path, '/connect/token');
    assert.match(error.message, /refused the client id or client secret/);
    assert.match(error.message, /invalid_client/);
  });
  assert.equal(v1.requests.length, 1);
  assert.deepEqual(waits, []);
});

test('a list is walked across pages with offset += count while hasMore', async (t) => {
  const resources = Array.from({ length: 250 }, (_, i) => ({ object: 'resource', id: String(2000 + i), locationId: '12', name: `R${i}` }));
  const { v1, client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, resources } });
  const { records, malformed } = await client.list('/setup/v1/resources', { locationId: '12' });
  assert.equal(records.length, 250);
  assert.deepEqual(records.map((record) => record.id), resources.map((resource) => resource.id));
  assert.deepEqual(malformed, []);
  assert.deepEqual(apiRequests(v1).map((request) => [request.query.get('offset'), request.query.get('limit')]), [['0', '100'], ['100', '100'], ['200', '100']]);

  const exported = await client.readExport();
  assert.equal(exported.data.resources.length, 250);
  // one allocations and one blocks list per resource
  assert.equal(apiRequests(v1).filter((request) => /^\/setup\/v1\/resources\/\d+\/(allocations|blocks)$/.test(request.path)).length, 500);
});

test('the stand-in answers a limit above 100 with 400, as v1 does (LIMIT-100)', async (t) => {
  const { v1 } = await harness(t);
  const token = await fetch(v1.tokenUrl, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: v1.clientId, client_secret: v1.clientSecret, scope: 'OnSchedApi' }),
  }).then((response) => response.json() as Promise<{ access_token: string }>);
  const answer = await fetch(`${v1.baseUrl}/setup/v1/resources?limit=101`, { headers: { authorization: `Bearer ${token.access_token}` } });
  assert.equal(answer.status, 400);
  assert.equal(((await answer.json()) as { code: string }).code, 'LIMIT-100');
});

test('a 429 waits for Retry-After (seconds or an HTTP-date) and then succeeds', async (t) => {
  const clock = Date.UTC(2025, 0, 6, 12, 0, 0);
  const { v1, client, waits } = await harness(t, {}, { now: () => clock });
  v1.failNext({ status: 429, retryAfterSeconds: 7, pathIncludes: '/setup/v1/services' });
  v1.failNext({ status: 429, retryAfter: new Date(clock + 3000).toUTCString(), pathIncludes: '/setup/v1/services' });
  const { records } = await client.list('/setup/v1/services', { locationId: '12' });
  assert.equal(records.length, 2);
  assert.deepEqual(waits, [7000, 3000]);
  assert.deepEqual(apiRequests(v1).map((request) => request.status), [429, 429, 200]);
});

test('a transient 500 is retried with exponential backoff; five in a row give up', async (t) => {
  const { v1, client, waits } = await harness(t);
  v1.failNext({ status: 500, times: 2, pathIncludes: '/blocks' });
  const result = await client.readExport();
  assert.deepEqual(result.data.resourceBlocks, V1_EXAMPLE_EXPORT.resourceBlocks);
  assert.deepEqual(waits, [500, 1000]);

  waits.length = 0;
  v1.failNext({ status: 503, times: 5, pathIncludes: '/setup/v1/locations' });
  await rejectsWith(client.list('/setup/v1/locations'), (error) => {
    assert.equal(error.status, 503);
    assert.equal(error.path, 'GET /setup/v1/locations');
    assert.match(error.message, /gave up after 5 attempts/);
  });
  assert.deepEqual(waits, [500, 1000, 2000, 4000]);
  assert.equal(backoffMs(6), 10_000);
});

test('a 404 is not retried', async (t) => {
  const { v1, client, waits } = await harness(t);
  await rejectsWith(client.list('/setup/v1/resources/999/blocks'), (error) => {
    assert.equal(error.status, 404);
    assert.equal(error.path, '/setup/v1/resources/999/blocks');
    assert.match(error.message, /answered 404 for GET \/setup\/v1\/resources\/999\/blocks: resource 999 not found/);
  });
  assert.equal(apiRequests(v1).length, 1);
  assert.deepEqual(waits, []);
});

test('an unreachable source is retried, then fails without a status', async () => {
  const port = await freePort();
  const waits: number[] = [];
  const client = createV1Client(
    { baseUrl: `http://127.0.0.1:${port}`, tokenUrl: `http://127.0.0.1:${port}/connect/token`, clientId: 'a', clientSecret: 'b' },
    { fetch: createOutboundFetch({ timeoutMs: 10_000, allowLoopbackHttp: true }), maxAttempts: 3, sleep: async (ms) => void waits.push(ms) },
  );
  await rejectsWith(client.list('/setup/v1/locations'), (error) => {
    assert.equal(error.status, null);
    assert.match(error.message, /could not be reached/);
  });
  assert.deepEqual(waits, [500, 1000]);
});

test('a row that is not an object is reported in malformed and the rest is read', async (t) => {
  const { v1, client } = await harness(t);
  v1.injectMalformed('resources', 42, 1);
  v1.injectMalformed('resourceBlocks', null);
  const result = await client.readExport();
  assert.deepEqual(result.data.resources, V1_EXAMPLE_EXPORT.resources);
  assert.deepEqual(result.data.resourceBlocks, V1_EXAMPLE_EXPORT.resourceBlocks);
  assert.deepEqual(result.data.services, V1_EXAMPLE_EXPORT.services);
  assert.deepEqual(
    result.malformed.map(({ kind, index }) => ({ kind, index })),
    // the null block matches every resource's block list (it has no resourceId): once per resource
    [
      { kind: 'resources', index: 1 },
      { kind: 'resourceBlocks', index: 0 },
      { kind: 'resourceBlocks', index: 1 },
    ],
  );
  assert.match(result.malformed[0]!.reason, /row 1 of GET \/setup\/v1\/resources is a number, not an object/);
  assert.match(result.malformed[1]!.reason, /is null/);
});

test('per-location lists are read for every location and de-duplicated by id', async (t) => {
  const second = { ...V1_EXAMPLE_EXPORT.locations[0], id: '13', name: 'Uptown', primaryBusiness: false };
  // Service 301 shows in both locations' lists (a company-wide record): it is kept once.
  const services = [...V1_EXAMPLE_EXPORT.services, { ...V1_EXAMPLE_EXPORT.services[0], locationId: '13' }, { object: 'service', id: 303, locationId: '13', name: 'Massage' }];
  const { v1, client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, locations: [...V1_EXAMPLE_EXPORT.locations, second], services } });
  const result = await client.readExport();
  assert.deepEqual(result.data.locations.map((location) => location.id), ['12', '13']);
  assert.deepEqual(result.data.services.map((service) => service.id), ['301', '302', 303]);
  assert.equal(result.data.services[0]!.locationId, '12');
  assert.deepEqual(apiRequests(v1).filter((request) => request.path === '/setup/v1/services').map((request) => request.query.get('locationId')), ['12', '13']);
});

test('http to an address the outbound rules refuse is never called', async (t) => {
  const { v1 } = await harness(t);
  const strict = createV1Client(
    { baseUrl: v1.baseUrl, tokenUrl: v1.tokenUrl, clientId: v1.clientId, clientSecret: v1.clientSecret },
    { fetch: createOutboundFetch({ timeoutMs: 10_000, allowLoopbackHttp: false }), sleep: async () => assert.fail('a refusal is not retried') },
  );
  await rejectsWith(strict.readExport(), (error) => {
    assert.equal(error.status, null);
    assert.match(error.message, /not allowed: refused http:\/\/127\.0\.0\.1:\d+: the URL must use https/);
  });
  const plain = createV1Client(
    { baseUrl: 'http://api.onsched.example', tokenUrl: 'http://identity.onsched.example/connect/token', clientId: 'a', clientSecret: 'b' },
    { fetch: createOutboundFetch({ timeoutMs: 10_000, allowLoopbackHttp: true }), sleep: async () => assert.fail('a refusal is not retried') },
  );
  await rejectsWith(plain.list('/setup/v1/locations'), (error) => assert.match(error.message, /must use https/));
  assert.equal(v1.requests.length, 0);
});

// --- Customers and appointments (consumer interface, v1-source.md §0 source C) -----------------

const customer = (id: string | number, extra: Record<string, unknown> = {}) => ({ object: 'customer', id, firstname: `First${id}`, lastname: `Last${id}`, email: `c${id}@example.com`, ...extra });
const appointment = (id: string, start: string, extra: Record<string, unknown> = {}) => ({
  object: 'appointment', id, locationId: '12', serviceId: '301', resourceId: '1501', customerId: '5001', status: 'BK', startDateTime: start, duration: 60, ...extra,
});
const uptown = { ...V1_EXAMPLE_EXPORT.locations[0], id: '13', name: 'Uptown', primaryBusiness: false };

test('customers are read for every location, across pages, and de-duplicated by id', async (t) => {
  // 120 customers of location 12 (two pages), one of location 13, and one of no location, which
  // both locations list (kept once).
  const customers = [
    ...Array.from({ length: 120 }, (_, i) => customer(String(5000 + i), { locationId: '12' })),
    customer('6001', { businessId: 13 }),
    customer(7001),
  ];
  const { v1, client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, locations: [...V1_EXAMPLE_EXPORT.locations, uptown], customers } });
  const result = await client.readExport();
  assert.deepEqual(result.data.customers.map((row) => row.id), [...customers.slice(0, 120).map((row) => row.id), 7001, '6001']);
  assert.deepEqual(result.malformed, []);
  assert.deepEqual(
    apiRequests(v1).filter((request) => request.path === '/consumer/v1/customers').map((request) => [request.query.get('locationId'), request.query.get('offset')]),
    [['12', '0'], ['12', '100'], ['13', '0']],
  );
});

test('appointments are read per location from the day before today (UTC) on', async (t) => {
  const clock = Date.UTC(2025, 5, 10, 2, 30); // 2025-06-10 02:30 UTC: still 2025-06-09 in New York
  const appointments = [
    appointment('9001', '2025-06-08T10:00:00'), // before the asked start date: not read
    appointment('9002', '2025-06-09T22:00:00-04:00'), // today in New York
    appointment('9003', '2025-06-10T10:00:00', { status: 'CN' }),
    appointment('9004', '2025-07-01T09:00:00', { locationId: '13' }),
    { object: 'appointment', id: '9005', locationId: '12', serviceId: '301', status: 'BK', appointmentStartDateTime: '2025-06-01T09:00:00' }, // past, by its other start field
    { object: 'appointment', id: '9006', locationId: '12', serviceId: '301', status: 'BK', appointmentStartDateTime: '2025-06-12T09:00:00', duration: 30 },
  ];
  const { v1, client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, locations: [...V1_EXAMPLE_EXPORT.locations, uptown], appointments } }, { now: () => clock });
  const result = await client.readExport();
  assert.deepEqual(result.data.appointments.map((row) => row.id), ['9002', '9003', '9006', '9004']);
  assert.deepEqual(result.data.appointments[0], appointments[1]);
  assert.deepEqual(
    apiRequests(v1).filter((request) => request.path === '/consumer/v1/appointments').map((request) => [request.query.get('locationId'), request.query.get('startDate'), request.query.get('endDate')]),
    [['12', '2025-06-09', null], ['13', '2025-06-09', null]],
  );
});

test('the stand-in filters appointments by endDate and status, and company-wide without locationId', async (t) => {
  const appointments = [appointment('1', '2025-06-09T10:00:00'), appointment('2', '2025-06-10T10:00:00', { status: 'CN' }), appointment('3', '2025-06-11T10:00:00', { locationId: '13' })];
  const { client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, appointments } });
  const ids = async (query: Record<string, string>) => (await client.list('/consumer/v1/appointments', query)).records.map((row) => row.id);
  assert.deepEqual(await ids({}), ['1', '2', '3']);
  assert.deepEqual(await ids({ locationId: '12', endDate: '2025-06-10' }), ['1', '2']);
  assert.deepEqual(await ids({ startDate: '2025-06-10', status: 'BK' }), ['3']);
});

test('a customer or appointment row that is not an object is reported in malformed under its kind', async (t) => {
  const clock = Date.UTC(2025, 5, 10, 12);
  const { v1, client } = await harness(t, { seed: { ...V1_EXAMPLE_EXPORT, customers: [customer('5001'), customer('5002')], appointments: [appointment('9001', '2025-06-20T10:00:00')] } }, { now: () => clock });
  v1.injectMalformed('customers', 'oops', 1);
  v1.injectMalformed('appointments', [1, 2], 0);
  const result = await client.readExport();
  assert.deepEqual(result.data.customers.map((row) => row.id), ['5001', '5002']);
  assert.deepEqual(result.data.appointments.map((row) => row.id), ['9001']);
  assert.deepEqual(
    result.malformed.map(({ kind, index, reason }) => ({ kind, index, reason })),
    [
      { kind: 'customers', index: 1, reason: 'row 1 of GET /consumer/v1/customers is a string, not an object' },
      { kind: 'appointments', index: 0, reason: 'row 0 of GET /consumer/v1/appointments is an array, not an object' },
    ],
  );
});
