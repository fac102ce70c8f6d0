// GET /v3/public/resources: the resources a booking page's visitor may choose for a service at a
// location (linked to both, live), by name, with nothing of the staff's own (email, phone).
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { TenantFixture } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const ORIGIN = 'https://book.example.com';

function resources(tenant: TenantFixture, query: string, headers: Record<string, string> = { 'x-client-id': tenant.publicClientId, origin: ORIGIN }) {
  return context.app.inject({ method: 'GET', url: `/v3/public/resources?${query}`, headers });
}

function assertError(response: LightMyRequestResponse, status: number) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  return body as { message: string; errors: Array<{ path: string; msg: string; location: string }> };
}

/** Two locations, an online service at both, a hidden one; resources linked in every combination. */
async function shop() {
  const tenant = await context.world.tenant({ allowedDomains: ['book.example.com'] });
  const main = await tenant.location({ name: 'Main' });
  const branch = await tenant.location({ name: 'Branch' });
  const service = await tenant.service({ name: 'Check-up', locationIds: [main, branch] });
  const hidden = await tenant.service({ name: 'Staff only', locationIds: [main], showOnline: false });
  const zoe = await tenant.resource({ name: 'Zoe', email: 'zoe@example.com', phone: '+442071234567', locationIds: [main], serviceIds: [service, hidden] });
  const ann = await tenant.resource({ name: 'Ann', locationIds: [main], serviceIds: [service] });
  const atBranch = await tenant.resource({ name: 'Bea', locationIds: [branch], serviceIds: [service] });
  const otherService = await tenant.resource({ name: 'Cid', locationIds: [main], serviceIds: [hidden] });
  return { tenant, main, branch, service, hidden, zoe, ann, atBranch, otherService };
}

describe('GET /v3/public/resources', { concurrency: true }, () => {
  test('lists the live resources linked to both the location and the service, by name, with their id and name only', async () => {
    const s = await shop();
    const response = await resources(s.tenant, `LocationId=${s.main}&ServiceId=${s.service}`);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
    assert.deepEqual(json(response), { data: [{ id: s.ann, name: 'Ann' }, { id: s.zoe, name: 'Zoe' }] });
    assert.equal(response.body.includes('zoe@example.com'), false);
    assert.equal(response.body.includes('+442071234567'), false);

    const atBranch = await resources(s.tenant, `LocationId=${s.branch}&ServiceId=${s.service}`);
    assert.deepEqual(json(atBranch), { data: [{ id: s.atBranch, name: 'Bea' }] });
  });

  test('an archived resource is not offered', async () => {
    const s = await shop();
    const archived = await context.app.inject({ method: 'DELETE', url: `/v3/resource/${s.zoe}`, headers: s.tenant.dashboard });
    assert.equal(archived.statusCode, 204, archived.body);
    const response = await resources(s.tenant, `LocationId=${s.main}&ServiceId=${s.service}`);
    assert.deepEqual(json(response), { data: [{ id: s.ann, name: 'Ann' }] });
  });

  test('a service not shown online reads as an unknown one: 400 at ServiceId', async () => {
    const s = await shop();
    const hidden = assertError(await resources(s.tenant, `LocationId=${s.main}&ServiceId=${s.hidden}`), 400);
    const unknownId = randomUUID();
    const unknown = assertError(await resources(s.tenant, `LocationId=${s.main}&ServiceId=${unknownId}`), 400);
    assert.deepEqual(hidden.errors.map((e) => [e.location, e.path, e.msg.replace(s.hidden, '<id>')]), unknown.errors.map((e) => [e.location, e.path, e.msg.replace(unknownId, '<id>')]));
    assert.deepEqual(hidden.errors.map((e) => [e.location, e.path]), [['query', 'ServiceId']]);
  });

  test('another company\'s location or service is 400 naming it; both ids are required uuids', async () => {
    const s = await shop();
    const other = await shop();
    const location = assertError(await resources(s.tenant, `LocationId=${other.main}&ServiceId=${s.service}`), 400);
    assert.deepEqual(location.errors.map((e) => [e.location, e.path]), [['query', 'LocationId']]);
    const service = assertError(await resources(s.tenant, `LocationId=${s.main}&ServiceId=${other.service}`), 400);
    assert.deepEqual(service.errors.map((e) => [e.location, e.path]), [['query', 'ServiceId']]);
    assertError(await resources(s.tenant, `LocationId=${s.main}`), 400);
    assertError(await resources(s.tenant, `ServiceId=${s.service}`), 400);
    assertError(await resources(s.tenant, `LocationId=not-a-uuid&ServiceId=${s.service}`), 400);
  });

  test('a missing or refused Origin is 403; a missing or bad client id is 401', async () => {
    const s = await shop();
    const query = `LocationId=${s.main}&ServiceId=${s.service}`;
    assertError(await resources(s.tenant, query, { 'x-client-id': s.tenant.publicClientId }), 403);
    assertError(await resources(s.tenant, query, { 'x-client-id': s.tenant.publicClientId, origin: 'https://evil.example.com' }), 403);
    assertError(await resources(s.tenant, query, { 'x-client-id': 'pub_not-a-real-client', origin: ORIGIN }), 401);
    assertError(await resources(s.tenant, query, { 'x-api-key': s.tenant.apiKey, origin: ORIGIN }), 401);
  });
});
