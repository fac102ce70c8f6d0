// Webhook configuration: GET/POST /v3/webhook?locationId=, POST /v3/webhook/setWebhooks?locationId=,
// PUT/PATCH/DELETE /v3/webhook/:id?locationId=, GET /v3/webhook/:id/deliveries (the specification:
// Webhook fields, Webhooks and templates, Delivery rules; docs/api.md), and the repository functions
// the delivery worker uses (activeWebhooksFor, startDelivery, finishDelivery).
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { createTestContext } from '../../helpers/app.js';
import { checkWebhookUrl } from '../../../src/modules/webhooks/destination.js';
import { activeWebhooksFor, finishDelivery, startDelivery } from '../../../src/modules/webhooks/repository.js';
import type { EventTrigger } from '../../../src/platform/database/schema.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Webhook {
  id: string;
  companyId: string;
  locationId: string;
  url: string;
  headers: Record<string, string>;
  triggers: string[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  trigger: string;
  appointmentId: string;
  url: string;
  outcome: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  address: string | null;
  createdAt: string;
  finishedAt: string | null;
}

interface ErrorBody {
  success: boolean;
  message: string;
  errors: Array<{ type: string; location: string; path: string; msg: string }>;
}

interface World {
  tenant: Tenant;
  headers: Record<string, string>;
  location: string;
  location2: string;
}

function call(method: Method, url: string, headers: Record<string, string>, payload?: unknown) {
  return context.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}

function expect<T>(response: LightMyRequestResponse, status: number): T {
  assert.equal(response.statusCode, status, response.body);
  return json<T>(response);
}

function assertError(response: LightMyRequestResponse, status: number, message?: RegExp): ErrorBody {
  assert.equal(response.statusCode, status, response.body);
  const body = json<ErrorBody>(response);
  assert.equal(body.success, false);
  if (message) assert.match(body.message, message);
  return body;
}

/** A 400 whose only field error is at `path` (in `location`); returns that entry's msg. */
function assertInvalidAt(response: LightMyRequestResponse, path: string, location = 'body'): string {
  const body = assertError(response, 400);
  assert.deepEqual(
    body.errors.map((e) => ({ type: e.type, location: e.location, path: e.path })),
    [{ type: 'field', location, path }],
    response.body,
  );
  return body.errors[0]!.msg;
}

/** A tenant with a location in London and a second in Paris. */
async function newWorld(): Promise<World> {
  const tenant = await context.world.tenant();
  const location = await tenant.location();
  const location2 = await tenant.location({ name: 'Second', timezone: 'Europe/Paris' });
  return { tenant, headers: tenant.dashboard, location, location2 };
}

const at = (locationId: string) => `?locationId=${locationId}`;

const HOOK = { url: 'https://hooks.example.com/slotwise', triggers: ['NEW_APPOINTMENT'] };

async function createHook(world: World, body: Record<string, unknown> = HOOK, locationId = world.location, headers = world.headers): Promise<Webhook> {
  return expect<Webhook>(await call('POST', `/v3/webhook${at(locationId)}`, headers, body), 201);
}

async function listHooks(world: World, locationId = world.location, headers = world.headers): Promise<Webhook[]> {
  return expect<{ data: Webhook[] }>(await call('GET', `/v3/webhook${at(locationId)}`, headers), 200).data;
}

/** A webhook row written straight into the database, as a migration or an import might have. */
async function insertRow(world: World, row: { url: string; headers?: Record<string, unknown>; triggers?: string[]; active?: boolean; locationId?: string }) {
  const id = randomUUID();
  await context.database.db
    .insertInto('webhooks')
    .values({
      companyId: world.tenant.companyId,
      id,
      locationId: row.locationId ?? world.location,
      url: row.url,
      headers: JSON.stringify(row.headers ?? {}),
      triggers: row.triggers ?? ['NEW_APPOINTMENT'],
      active: row.active ?? true,
    })
    .execute();
  return id;
}

async function scopedMember(world: World, role: 'User' | 'Admin', locationIds: string[]) {
  const user = await addMember(context, world.tenant, role);
  const response = await call('POST', '/v3/users/adjustUsers', world.headers, {
    users: [{ id: user.userId, locationAccessMode: 'LOCATIONS', allowedLocationIds: locationIds }],
  });
  assert.equal(response.statusCode, 200, response.body);
  return user.headers;
}

describe('creating and listing', () => {
  test('POST creates a webhook of the location (201) and GET lists it; headers and query strings are kept', async () => {
    const world = await newWorld();
    const body = {
      url: 'https://hooks.example.com/in?token=abc&source=slotwise',
      headers: { Authorization: 'Bearer shared-secret', 'X-Team': 'ops' },
      triggers: ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'],
    };
    const created = await createHook(world, body);
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...created, id: undefined, createdAt: undefined, updatedAt: undefined },
      { id: undefined, companyId: world.tenant.companyId, locationId: world.location, ...body, active: true, createdAt: undefined, updatedAt: undefined },
    );
    assert.ok(!Number.isNaN(Date.parse(created.createdAt)) && !Number.isNaN(Date.parse(created.updatedAt)));
    assert.deepEqual(await listHooks(world), [created]);
    assert.deepEqual(await listHooks(world, world.location2), [], 'another location has its own set');
  });

  test('headers are optional ({} when omitted), active may be false at creation, lists are oldest first', async () => {
    const world = await newWorld();
    const first = await createHook(world);
    const second = await createHook(world, { url: 'https://other.example.org/x', triggers: ['APPOINTMENT_REMINDER'], active: false });
    assert.deepEqual(first.headers, {});
    assert.equal(second.active, false);
    assert.deepEqual((await listHooks(world)).map((h) => h.id), [first.id, second.id]);
  });

  test('locationId is required and must be a live location of the company', async () => {
    const world = await newWorld();
    const other = await newWorld();
    assertInvalidAt(await call('GET', '/v3/webhook', world.headers), 'locationId', 'query');
    assertInvalidAt(await call('GET', '/v3/webhook?locationId=nope', world.headers), 'locationId', 'query');
    for (const [method, url, payload] of [
      ['GET', '/v3/webhook', undefined],
      ['POST', '/v3/webhook', HOOK],
      ['POST', '/v3/webhook/setWebhooks', { webhooks: [HOOK] }],
    ] as const) {
      for (const foreign of [other.location, randomUUID()]) {
        const body = assertError(await call(method, `${url}${at(foreign)}`, world.headers, payload), 400, new RegExp(foreign));
        assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'locationId']]);
      }
    }
    // An archived location is no longer the company's to configure.
    assert.equal((await call('DELETE', `/v3/location/${world.location2}`, world.headers)).statusCode, 204);
    assertError(await call('POST', `/v3/webhook${at(world.location2)}`, world.headers, HOOK), 400, new RegExp(world.location2));
    assert.deepEqual(await listHooks(other), [], 'nothing was written to the other company');
  });

  test(`a location has at most 20 webhooks`, async () => {
    const world = await newWorld();
    const set = Array.from({ length: 20 }, (_, i) => ({ url: `https://h${i}.example.com/`, triggers: ['NEW_APPOINTMENT'] }));
    expect(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: set }), 200);
    const body = assertError(await call('POST', `/v3/webhook${at(world.location)}`, world.headers, HOOK), 400, /at most 20 webhooks/);
    assert.deepEqual(body.errors.map((e) => e.path), ['locationId']);
    assertInvalidAt(
      await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: [...set, HOOK] }),
      'webhooks',
    );
    assert.deepEqual((await listHooks(world)).map((h) => h.url), set.map((h) => h.url), 'a replaced set lists in the order given');
    await createHook(world, HOOK, world.location2);
  });

  test('concurrent creates never pass the cap', async () => {
    const world = await newWorld();
    const set = Array.from({ length: 18 }, (_, i) => ({ url: `https://h${i}.example.com/`, triggers: ['NEW_APPOINTMENT'] }));
    expect(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: set }), 200);
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => call('POST', `/v3/webhook${at(world.location)}`, world.headers, HOOK).then((r) => r.statusCode)),
    );
    assert.deepEqual(statuses.sort(), [201, 201, 400, 400, 400]);
    assert.equal((await listHooks(world)).length, 20);
  });
});

describe('destination rules', () => {
  const REFUSED_URLS: ReadonlyArray<readonly [string, string]> = [
    ['http', 'http://hooks.example.com/in'],
    ['credentials', 'https://user:secret@hooks.example.com/in'],
    ['username only', 'https://user@hooks.example.com/in'],
    ['fragment', 'https://hooks.example.com/in#part'],
    ['IPv4 literal', 'https://93.184.215.14/in'],
    ['decimal IPv4 literal', 'https://2130706433/in'],
    ['IPv6 literal', 'https://[2606:4700::1111]/in'],
    ['localhost', 'https://localhost/in'],
    ['localhost subdomain', 'https://api.localhost/in'],
    ['metadata host', 'https://metadata.google.internal/computeMetadata/v1/'],
    ['metadata IP', 'https://169.254.169.254/latest/meta-data/'],
    ['internal name', 'https://db.internal/in'],
    ['single label', 'https://intranet/in'],
    ['not a URL', 'hooks.example.com'],
  ];

  test('create refuses every disallowed URL with 400 at url, the reason as msg, and writes nothing', async () => {
    const world = await newWorld();
    for (const [label, url] of REFUSED_URLS) {
      const check = checkWebhookUrl(url);
      assert.equal(check.ok, false, label);
      const msg = assertInvalidAt(await call('POST', `/v3/webhook${at(world.location)}`, world.headers, { ...HOOK, url }), 'url');
      assert.equal(msg, (check as { reason: string }).reason, label);
    }
    assert.deepEqual(await listHooks(world), []);
  });

  test('query strings, ports and long public names are allowed', async () => {
    const world = await newWorld();
    for (const url of [
      'https://hooks.example.com/in?a=1&b=two&c=%20x',
      'https://hooks.example.com:8443/in?',
      'https://a.b.c.hooks.example.co.uk/path/to/hook',
    ]) {
      assert.equal((await createHook(world, { ...HOOK, url })).url, url);
    }
  });

  const REFUSED_HEADERS: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
    ['non-string value', { 'X-Count': 5 }, 'headers.X-Count'],
    ['boolean value', { 'X-Flag': true }, 'headers.X-Flag'],
    ['nested object', { 'X-Nested': { inner: 'value' } }, 'headers.X-Nested'],
    ['array value', { 'X-List': ['a'] }, 'headers.X-List'],
    ['null value', { 'X-Null': null }, 'headers.X-Null'],
    ['Host', { Host: 'internal.example.com' }, 'headers.Host'],
    ['Cookie', { Cookie: 'session=1' }, 'headers.Cookie'],
    ['Metadata-Flavor', { 'Metadata-Flavor': 'Google' }, 'headers.Metadata-Flavor'],
    ['Transfer-Encoding', { 'transfer-encoding': 'chunked' }, 'headers.transfer-encoding'],
    ['X-Forwarded-For', { 'X-Forwarded-For': '127.0.0.1' }, 'headers.X-Forwarded-For'],
    ['proxy-*', { 'Proxy-Anything': 'x' }, 'headers.Proxy-Anything'],
    ['invalid name', { 'Bad Name': 'x' }, 'headers.Bad Name'],
    ['CR LF in value', { 'X-Inject': 'a\r\nHost: evil' }, 'headers.X-Inject'],
    ['repeated name in another case', { 'X-Key': 'a', 'x-key': 'b' }, 'headers.x-key'],
  ];

  test('create refuses bad headers with 400 at headers.<name> and writes nothing', async () => {
    const world = await newWorld();
    for (const [label, headers, path] of REFUSED_HEADERS) {
      const msg = assertInvalidAt(await call('POST', `/v3/webhook${at(world.location)}`, world.headers, { ...HOOK, headers }), path);
      assert.ok(msg.length > 0, label);
    }
    assertInvalidAt(await call('POST', `/v3/webhook${at(world.location)}`, world.headers, { ...HOOK, headers: ['a'] }), 'headers');
    assertInvalidAt(await call('POST', `/v3/webhook${at(world.location)}`, world.headers, { ...HOOK, headers: 'X-A: b' }), 'headers');
    assert.deepEqual(await listHooks(world), []);
  });

  test('triggers: a non-empty list of unique trigger names', async () => {
    const world = await newWorld();
    const post = (body: unknown) => call('POST', `/v3/webhook${at(world.location)}`, world.headers, body);
    assertInvalidAt(await post({ url: HOOK.url }), 'triggers');
    assertInvalidAt(await post({ ...HOOK, triggers: [] }), 'triggers');
    assertInvalidAt(await post({ ...HOOK, triggers: ['NEW_APPOINTMENT', 'NEW_APPOINTMENT'] }), 'triggers');
    assertInvalidAt(await post({ ...HOOK, triggers: ['APPOINTMENT_BOOKED'] }), 'triggers.0');
    assertInvalidAt(await post({ ...HOOK, triggers: 'NEW_APPOINTMENT' }), 'triggers');
    assertInvalidAt(await post({ ...HOOK, active: 'yes' }), 'active');
    assertInvalidAt(await post({ ...HOOK, secret: 'x' }), 'secret');
    assertInvalidAt(await post({ triggers: HOOK.triggers }), 'url');
    const all = ['NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED', 'APPOINTMENT_CANCELLED', 'APPOINTMENT_RESCHEDULED', 'APPOINTMENT_REMINDER'];
    assert.deepEqual((await createHook(world, { ...HOOK, triggers: all })).triggers, all);
    assert.equal((await listHooks(world)).length, 1);
  });
});

describe('setWebhooks', () => {
  test('replaces the whole set of the location and leaves other locations alone', async () => {
    const world = await newWorld();
    const old = await createHook(world);
    const elsewhere = await createHook(world, HOOK, world.location2);
    const replaced = expect<{ data: Webhook[] }>(
      await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, {
        webhooks: [
          { url: 'https://a.example.com/1?x=1', triggers: ['NEW_APPOINTMENT'], headers: { 'X-Secret': 's1' } },
          { url: 'https://b.example.com/2', triggers: ['APPOINTMENT_CANCELLED', 'APPOINTMENT_REMINDER'], active: false },
        ],
      }),
      200,
    ).data;
    assert.deepEqual(
      replaced.map((h) => [h.url, h.triggers, h.headers, h.active, h.locationId]),
      [
        ['https://a.example.com/1?x=1', ['NEW_APPOINTMENT'], { 'X-Secret': 's1' }, true, world.location],
        ['https://b.example.com/2', ['APPOINTMENT_CANCELLED', 'APPOINTMENT_REMINDER'], {}, false, world.location],
      ],
    );
    assert.ok(!replaced.some((h) => h.id === old.id));
    assert.deepEqual(await listHooks(world), replaced);
    assert.deepEqual(await listHooks(world, world.location2), [elsewhere]);
    assert.equal((await call('PUT', `/v3/webhook/${old.id}`, world.headers, { active: false })).statusCode, 404, 'the old row is gone');
  });

  test('an empty list removes every webhook of the location', async () => {
    const world = await newWorld();
    await createHook(world);
    assert.deepEqual(expect<{ data: Webhook[] }>(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: [] }), 200).data, []);
    assert.deepEqual(await listHooks(world), []);
  });

  test('one bad entry is 400 at webhooks.N.<field> and nothing changes', async () => {
    const world = await newWorld();
    const kept = await createHook(world);
    const good = { url: 'https://ok.example.com/', triggers: ['NEW_APPOINTMENT'] };
    const set = (webhooks: unknown[]) => call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks });
    assertInvalidAt(await set([good, { ...good, url: 'http://ok.example.com/' }]), 'webhooks.1.url');
    assertInvalidAt(await set([good, good, { ...good, url: 'https://169.254.169.254/' }]), 'webhooks.2.url');
    assertInvalidAt(await set([{ ...good, headers: { Cookie: 'a=b' } }]), 'webhooks.0.headers.Cookie');
    assertInvalidAt(await set([{ ...good, headers: { 'X-A': { nested: 'x' } } }]), 'webhooks.0.headers.X-A');
    assertInvalidAt(await set([good, { ...good, triggers: [] }]), 'webhooks.1.triggers');
    assertInvalidAt(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, {}), 'webhooks');
    // Several bad entries are all reported.
    const body = assertError(await set([{ ...good, url: 'http://a.example.com/' }, good, { ...good, url: 'https://localhost/' }]), 400);
    assert.deepEqual(body.errors.map((e) => e.path), ['webhooks.0.url', 'webhooks.2.url']);
    assert.deepEqual(await listHooks(world), [kept]);
  });
});

describe('changing and deleting', () => {
  test('PUT changes the fields given and leaves the rest; PATCH is the same call', async () => {
    const world = await newWorld();
    const hook = await createHook(world, { ...HOOK, headers: { 'X-Secret': 'one', 'X-Other': 'two' } });
    const changed = expect<Webhook>(
      await call('PUT', `/v3/webhook/${hook.id}${at(world.location)}`, world.headers, { url: 'https://new.example.com/in?v=2', triggers: ['APPOINTMENT_CONFIRMED'] }),
      200,
    );
    assert.deepEqual(
      [changed.url, changed.triggers, changed.headers, changed.active, changed.createdAt],
      ['https://new.example.com/in?v=2', ['APPOINTMENT_CONFIRMED'], { 'X-Secret': 'one', 'X-Other': 'two' }, true, hook.createdAt],
    );
    assert.ok(changed.updatedAt >= hook.updatedAt);
    const patched = expect<Webhook>(await call('PATCH', `/v3/webhook/${hook.id}`, world.headers, { headers: { 'X-Secret': 'three' } }), 200);
    assert.deepEqual(patched.headers, { 'X-Secret': 'three' }, 'headers are replaced as a whole');
    assert.deepEqual(expect<Webhook>(await call('PUT', `/v3/webhook/${hook.id}`, world.headers, {}), 200).url, 'https://new.example.com/in?v=2');
    assert.deepEqual((await listHooks(world)).map((h) => [h.url, h.headers]), [['https://new.example.com/in?v=2', { 'X-Secret': 'three' }]]);
  });

  test('active false keeps the row (and true turns it back on)', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const off = expect<Webhook>(await call('PUT', `/v3/webhook/${hook.id}${at(world.location)}`, world.headers, { active: false }), 200);
    assert.equal(off.active, false);
    assert.deepEqual((await listHooks(world)).map((h) => [h.id, h.active, h.url]), [[hook.id, false, hook.url]]);
    const on = expect<Webhook>(await call('PATCH', `/v3/webhook/${hook.id}`, world.headers, { active: true }), 200);
    assert.equal(on.active, true);
  });

  test('PUT refuses a disallowed url or headers with 400 and changes nothing', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const put = (body: unknown) => call('PUT', `/v3/webhook/${hook.id}${at(world.location)}`, world.headers, body);
    for (const url of ['http://hooks.example.com/', 'https://u:p@hooks.example.com/', 'https://hooks.example.com/#x', 'https://10.0.0.1/', 'https://localhost/', 'https://metadata.google.internal/']) {
      assertInvalidAt(await put({ url, active: false }), 'url');
    }
    assertInvalidAt(await put({ headers: { Host: 'a.example.com' } }), 'headers.Host');
    assertInvalidAt(await put({ headers: { 'Metadata-Flavor': 'Google' } }), 'headers.Metadata-Flavor');
    assertInvalidAt(await put({ headers: { 'X-N': 1 } }), 'headers.X-N');
    assertInvalidAt(await put({ triggers: [] }), 'triggers');
    assertInvalidAt(await put({ locationId: world.location2 }), 'locationId');
    assertInvalidAt(await call('PUT', `/v3/webhook/not-a-uuid`, world.headers, { active: false }), 'id', 'params');
    assert.deepEqual(await listHooks(world), [hook]);
  });

  test('DELETE removes the webhook (204); a second DELETE is 404', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const kept = await createHook(world, { ...HOOK, url: 'https://kept.example.com/' });
    const response = await call('DELETE', `/v3/webhook/${hook.id}${at(world.location)}`, world.headers);
    assert.equal(response.statusCode, 204);
    assert.equal(response.body, '');
    assertError(await call('DELETE', `/v3/webhook/${hook.id}${at(world.location)}`, world.headers), 404);
    assert.deepEqual(await listHooks(world), [kept]);
    assert.equal((await call('DELETE', `/v3/webhook/${kept.id}`, world.headers)).statusCode, 204, 'locationId is optional');
  });
});

describe('rows stored before the rules', () => {
  test('a non-https row stays visible and changeable until replaced', async () => {
    const world = await newWorld();
    const id = await insertRow(world, { url: 'http://legacy.example.com/hook', headers: { 'X-Legacy': 'yes' } });
    const listed = await listHooks(world);
    assert.deepEqual(listed.map((h) => [h.id, h.url, h.headers, h.active]), [[id, 'http://legacy.example.com/hook', { 'X-Legacy': 'yes' }, true]]);
    // Changing other fields keeps the stored URL (it is never delivered: the delivery client refuses it).
    assert.equal(expect<Webhook>(await call('PUT', `/v3/webhook/${id}`, world.headers, { active: false }), 200).url, 'http://legacy.example.com/hook');
    // Setting a new URL applies the rules.
    assertInvalidAt(await call('PUT', `/v3/webhook/${id}`, world.headers, { url: 'http://legacy.example.com/hook2' }), 'url');
    expect(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: [HOOK] }), 200);
    assert.deepEqual((await listHooks(world)).map((h) => h.url), [HOOK.url]);
  });

  test('a stored header value that is not a string is shown as its JSON text', async () => {
    const world = await newWorld();
    await insertRow(world, { url: 'https://legacy.example.com/', headers: { 'X-Count': 3, 'X-Ok': 'fine' } });
    assert.deepEqual((await listHooks(world))[0]!.headers, { 'X-Count': '3', 'X-Ok': 'fine' });
  });
});

describe('tenant isolation', () => {
  test("another company's webhook in the path is 404; its location in the query is 400", async () => {
    const world = await newWorld();
    const other = await newWorld();
    const theirs = await createHook(other);
    for (const method of ['PUT', 'PATCH'] as const) {
      assertError(await call(method, `/v3/webhook/${theirs.id}`, world.headers, { active: false }), 404);
    }
    assertError(await call('DELETE', `/v3/webhook/${theirs.id}`, world.headers), 404);
    assertError(await call('GET', `/v3/webhook/${theirs.id}/deliveries`, world.headers), 404);
    assertError(await call('PUT', `/v3/webhook/${randomUUID()}`, world.headers, { active: false }), 404);
    // Their id with their location in our query: the location is not ours (400), never 404 or a hint.
    const body = assertError(await call('PUT', `/v3/webhook/${theirs.id}${at(other.location)}`, world.headers, { active: false }), 400, new RegExp(other.location));
    assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'locationId']]);
    assertError(await call('DELETE', `/v3/webhook/${theirs.id}${at(other.location)}`, world.headers), 400);
    // Our id with their location: 400 too.
    const ours = await createHook(world);
    assertError(await call('PUT', `/v3/webhook/${ours.id}${at(other.location)}`, world.headers, { active: false }), 400);
    assertError(await call('DELETE', `/v3/webhook/${ours.id}${at(other.location)}`, world.headers), 400);
    assert.deepEqual(await listHooks(other), [theirs], 'nothing changed there');
    assert.deepEqual(await listHooks(world), [ours]);
  });

  test('a webhook addressed with another location of the same company is 404', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    assertError(await call('PUT', `/v3/webhook/${hook.id}${at(world.location2)}`, world.headers, { active: false }), 404);
    assertError(await call('DELETE', `/v3/webhook/${hook.id}${at(world.location2)}`, world.headers), 404);
    assert.deepEqual(await listHooks(world), [hook]);
  });
});

describe('roles, scope and machine tokens', () => {
  test('Owner, Admin and User may manage webhooks; the Resource role gets 403 everywhere', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    for (const role of ['Admin', 'User'] as const) {
      const { headers } = await addMember(context, world.tenant, role);
      const mine = await createHook(world, HOOK, world.location, headers);
      assert.equal(expect<Webhook>(await call('PUT', `/v3/webhook/${mine.id}`, headers, { active: false }), 200).active, false);
      assert.equal((await call('DELETE', `/v3/webhook/${mine.id}`, headers)).statusCode, 204);
      assert.deepEqual(await listHooks(world, world.location, headers), [hook]);
    }
    const { headers } = await addMember(context, world.tenant, 'Resource');
    for (const [method, url, payload] of [
      ['GET', `/v3/webhook${at(world.location)}`, undefined],
      ['POST', `/v3/webhook${at(world.location)}`, HOOK],
      ['POST', `/v3/webhook/setWebhooks${at(world.location)}`, { webhooks: [] }],
      ['PUT', `/v3/webhook/${hook.id}`, { active: false }],
      ['PATCH', `/v3/webhook/${hook.id}`, { active: false }],
      ['DELETE', `/v3/webhook/${hook.id}`, undefined],
      ['GET', `/v3/webhook/${hook.id}/deliveries`, undefined],
    ] as const) {
      assertError(await call(method, url, headers, payload), 403, /Insufficient role/);
    }
    assert.deepEqual(await listHooks(world), [hook]);
  });

  test('a location-scoped user manages only their locations (403 for another one)', async () => {
    const world = await newWorld();
    const outside = await createHook(world, HOOK, world.location2);
    const headers = await scopedMember(world, 'User', [world.location]);
    const inside = await createHook(world, HOOK, world.location, headers);
    assert.deepEqual(await listHooks(world, world.location, headers), [inside]);
    for (const [method, url, payload] of [
      ['GET', `/v3/webhook${at(world.location2)}`, undefined],
      ['POST', `/v3/webhook${at(world.location2)}`, HOOK],
      ['POST', `/v3/webhook/setWebhooks${at(world.location2)}`, { webhooks: [] }],
      ['PUT', `/v3/webhook/${outside.id}`, { active: false }],
      ['PUT', `/v3/webhook/${outside.id}${at(world.location2)}`, { active: false }],
      ['DELETE', `/v3/webhook/${outside.id}`, undefined],
      ['GET', `/v3/webhook/${outside.id}/deliveries`, undefined],
    ] as const) {
      assertError(await call(method, url, headers, payload), 403, /outside your location access/);
    }
    // Scope is checked before the destination rules: a bad body for another location is still 403.
    assertError(await call('POST', `/v3/webhook${at(world.location2)}`, headers, { ...HOOK, url: 'http://a.example.com/' }), 403);
    assertError(await call('PUT', `/v3/webhook/${outside.id}`, headers, { url: 'http://a.example.com/' }), 403);
    assert.deepEqual(await listHooks(world, world.location2), [outside]);
    expect(await call('GET', `/v3/webhook/${inside.id}/deliveries`, headers), 200);
  });

  test('machine tokens: read may list, only write may change', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const read = { authorization: `Bearer ${await machineToken(context.app, world.tenant, 'read')}` };
    const write = { authorization: `Bearer ${await machineToken(context.app, world.tenant, 'write')}` };
    assert.deepEqual(await listHooks(world, world.location, read), [hook]);
    expect(await call('GET', `/v3/webhook/${hook.id}/deliveries`, read), 200);
    assertError(await call('POST', `/v3/webhook${at(world.location)}`, read, HOOK), 403, /Insufficient scope: write required/);
    assertError(await call('PUT', `/v3/webhook/${hook.id}`, read, { active: false }), 403, /write required/);
    assertError(await call('DELETE', `/v3/webhook/${hook.id}`, read), 403, /write required/);
    const made = await createHook(world, HOOK, world.location, write);
    expect(await call('PUT', `/v3/webhook/${made.id}`, write, { active: false }), 200);
    assert.equal((await call('DELETE', `/v3/webhook/${made.id}`, write)).statusCode, 204);
    assertError(await call('GET', `/v3/webhook${at(world.location)}`, {}), 401);
  });
});

describe('deliveries', () => {
  async function record(world: World, webhookId: string, url: string, trigger: EventTrigger = 'NEW_APPOINTMENT') {
    const eventId = randomUUID();
    const appointmentId = randomUUID();
    const id = await startDelivery(context.database.db, { companyId: world.tenant.companyId, webhookId, eventId, trigger, appointmentId, url });
    assert.ok(id);
    return { id, eventId, appointmentId };
  }

  async function setCreatedAt(id: string, at: string) {
    await sql`update webhook_deliveries set created_at = ${at}::timestamptz where id = ${id}::uuid`.execute(context.database.db);
  }

  test('lists attempts newest first with their outcome, paged', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const other = await createHook(world, { ...HOOK, url: 'https://other.example.com/' });
    const a = await record(world, hook.id, hook.url);
    const b = await record(world, hook.id, hook.url, 'APPOINTMENT_CANCELLED');
    const c = await record(world, hook.id, hook.url, 'APPOINTMENT_REMINDER');
    const d = await record(world, hook.id, hook.url);
    await record(world, other.id, other.url);
    await setCreatedAt(a.id, '2030-01-01T10:00:00Z');
    await setCreatedAt(b.id, '2030-01-01T11:00:00Z');
    await setCreatedAt(c.id, '2030-01-01T11:00:00Z');
    await setCreatedAt(d.id, '2030-01-01T12:00:00Z');
    assert.equal(await finishDelivery(context.database.db, world.tenant.companyId, a.id, { ok: true, status: 204, error: null, durationMs: 41.6, address: '93.184.215.14' }), true);
    assert.equal(await finishDelivery(context.database.db, world.tenant.companyId, b.id, { ok: false, status: 500, error: 'http: status 500', durationMs: 12, address: '93.184.215.14' }), true);
    assert.equal(await finishDelivery(context.database.db, world.tenant.companyId, c.id, { ok: false, status: null, error: 'refused: hooks.example.com resolves to the non-public address 10.0.0.1', durationMs: 3, address: null }), true);
    assert.equal(await finishDelivery(context.database.db, world.tenant.companyId, a.id, { ok: false, status: 500, error: 'again', durationMs: 1, address: null }), false, 'an attempt ends once');

    const page = expect<{ data: Delivery[]; page: number; limit: number; total: number }>(await call('GET', `/v3/webhook/${hook.id}/deliveries`, world.headers), 200);
    assert.deepEqual([page.page, page.limit, page.total], [1, 20, 4]);
    // created_at desc, then id desc for the tie between b and c.
    const tied = [b.id, c.id].sort().reverse();
    assert.deepEqual(page.data.map((x) => x.id), [d.id, ...tied, a.id]);
    const byId = new Map(page.data.map((x) => [x.id, x]));
    const first = byId.get(a.id)!;
    assert.deepEqual(
      { ...first, finishedAt: undefined },
      {
        id: a.id,
        webhookId: hook.id,
        eventId: a.eventId,
        trigger: 'NEW_APPOINTMENT',
        appointmentId: a.appointmentId,
        url: hook.url,
        outcome: 'delivered',
        statusCode: 204,
        error: null,
        durationMs: 42,
        address: '93.184.215.14',
        createdAt: '2030-01-01T10:00:00.000Z',
        finishedAt: undefined,
      },
    );
    assert.ok(!Number.isNaN(Date.parse(first.finishedAt!)));
    assert.deepEqual(
      [byId.get(b.id)!.outcome, byId.get(b.id)!.statusCode, byId.get(b.id)!.error, byId.get(b.id)!.trigger],
      ['failed', 500, 'http: status 500', 'APPOINTMENT_CANCELLED'],
    );
    assert.deepEqual([byId.get(c.id)!.outcome, byId.get(c.id)!.statusCode, byId.get(c.id)!.address], ['failed', null, null]);
    const pending = byId.get(d.id)!;
    assert.deepEqual(
      [pending.outcome, pending.statusCode, pending.error, pending.durationMs, pending.address, pending.finishedAt],
      ['pending', null, null, null, null, null],
    );

    const page1 = expect<{ data: Delivery[]; total: number }>(await call('GET', `/v3/webhook/${hook.id}/deliveries?limit=2&page=1`, world.headers), 200);
    const page2 = expect<{ data: Delivery[]; total: number; page: number; limit: number }>(await call('GET', `/v3/webhook/${hook.id}/deliveries?limit=2&page=2`, world.headers), 200);
    const page3 = expect<{ data: Delivery[] }>(await call('GET', `/v3/webhook/${hook.id}/deliveries?limit=2&page=3`, world.headers), 200);
    assert.deepEqual([...page1.data, ...page2.data].map((x) => x.id), page.data.map((x) => x.id));
    assert.deepEqual([page2.page, page2.limit, page2.total], [2, 2, 4]);
    assert.deepEqual(page3.data, []);
    assertInvalidAt(await call('GET', `/v3/webhook/${hook.id}/deliveries?limit=101`, world.headers), 'limit', 'query');
    assertInvalidAt(await call('GET', `/v3/webhook/${hook.id}/deliveries?page=0`, world.headers), 'page', 'query');
    assert.equal(expect<{ total: number }>(await call('GET', `/v3/webhook/${other.id}/deliveries`, world.headers), 200).total, 1);
  });

  test('deleting or replacing a webhook removes its delivery records', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    await record(world, hook.id, hook.url);
    assert.equal((await call('DELETE', `/v3/webhook/${hook.id}`, world.headers)).statusCode, 204);
    assertError(await call('GET', `/v3/webhook/${hook.id}/deliveries`, world.headers), 404);
    const count = async () =>
      (await context.database.db.selectFrom('webhookDeliveries').select('id').where('companyId', '=', world.tenant.companyId).execute()).length;
    assert.equal(await count(), 0);
    const replaced = await createHook(world);
    await record(world, replaced.id, replaced.url);
    assert.equal(await count(), 1);
    expect(await call('POST', `/v3/webhook/setWebhooks${at(world.location)}`, world.headers, { webhooks: [HOOK] }), 200);
    assert.equal(await count(), 0);
  });
});

describe('functions for the delivery worker', () => {
  test('activeWebhooksFor returns the active webhooks of the location whose triggers match', async () => {
    const world = await newWorld();
    const other = await newWorld();
    const match = await createHook(world, { url: 'https://a.example.com/?k=v', triggers: ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'], headers: { 'X-Secret': 's' } });
    const match2 = await createHook(world, { url: 'https://b.example.com/', triggers: ['APPOINTMENT_CANCELLED'] });
    await createHook(world, { url: 'https://inactive.example.com/', triggers: ['APPOINTMENT_CANCELLED'], active: false });
    await createHook(world, { url: 'https://other-trigger.example.com/', triggers: ['APPOINTMENT_REMINDER'] });
    await createHook(world, { url: 'https://other-location.example.com/', triggers: ['APPOINTMENT_CANCELLED'] }, world.location2);
    await createHook(other, { url: 'https://other-company.example.com/', triggers: ['APPOINTMENT_CANCELLED'] });
    const db = context.database.db;
    const found = await activeWebhooksFor(db, world.tenant.companyId, world.location, 'APPOINTMENT_CANCELLED');
    assert.deepEqual(found, [
      { id: match.id, url: match.url, headers: { 'X-Secret': 's' } },
      { id: match2.id, url: match2.url, headers: {} },
    ]);
    assert.deepEqual((await activeWebhooksFor(db, world.tenant.companyId, world.location, 'NEW_APPOINTMENT')).map((w) => w.id), [match.id]);
    assert.deepEqual(await activeWebhooksFor(db, world.tenant.companyId, world.location, 'APPOINTMENT_CONFIRMED'), []);
    // The location of another company never matches, even by its own id under our company.
    assert.deepEqual(await activeWebhooksFor(db, world.tenant.companyId, other.location, 'APPOINTMENT_CANCELLED'), []);
    // Turning one off stops it; the row stays.
    expect(await call('PUT', `/v3/webhook/${match2.id}`, world.headers, { active: false }), 200);
    assert.deepEqual((await activeWebhooksFor(db, world.tenant.companyId, world.location, 'APPOINTMENT_CANCELLED')).map((w) => w.id), [match.id]);
  });

  test('startDelivery records an event once per webhook: the second call returns null', async () => {
    const world = await newWorld();
    const hook = await createHook(world);
    const hook2 = await createHook(world, { ...HOOK, url: 'https://second.example.com/' });
    const db = context.database.db;
    const input = { companyId: world.tenant.companyId, webhookId: hook.id, eventId: randomUUID(), trigger: 'NEW_APPOINTMENT' as const, appointmentId: randomUUID(), url: hook.url };
    const first = await startDelivery(db, input);
    assert.match(first ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(await startDelivery(db, input), null);
    assert.equal(await startDelivery(db, { ...input, url: 'https://changed.example.com/' }), null);
    // Concurrent claims of the same pair: exactly one wins.
    const racing = { ...input, eventId: randomUUID() };
    const results = await Promise.all(Array.from({ length: 4 }, () => startDelivery(db, racing)));
    assert.equal(results.filter((r) => r !== null).length, 1);
    // The same event to another webhook is its own record.
    assert.ok(await startDelivery(db, { ...input, webhookId: hook2.id, url: hook2.url }));
    // Another company cannot record against this webhook, and a deleted webhook records nothing.
    assert.equal(await startDelivery(db, { ...input, companyId: (await newWorld()).tenant.companyId, eventId: randomUUID() }), null);
    assert.equal((await call('DELETE', `/v3/webhook/${hook2.id}`, world.headers)).statusCode, 204);
    assert.equal(await startDelivery(db, { ...input, webhookId: hook2.id, eventId: randomUUID() }), null);
    const rows = await db.selectFrom('webhookDeliveries').selectAll().where('companyId', '=', world.tenant.companyId).execute();
    assert.equal(rows.length, 2);
    const row = rows.find((r) => r.id === first)!;
    assert.deepEqual(
      [row.webhookId, row.eventId, row.trigger, row.appointmentId, row.url, row.outcome, row.finishedAt],
      [hook.id, input.eventId, 'NEW_APPOINTMENT', input.appointmentId, hook.url, 'pending', null],
    );
  });
});
