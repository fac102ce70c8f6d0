// Location scope both ways (issue 13): a LOCATIONS-scoped user's locationIds write applies to their
// own locations and leaves links to other locations as they are; they never see those links. And a
// foreign appointment id in the notifications query is a 400 like every foreign id in a query.
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

async function call(headers: Record<string, string>, method: 'GET' | 'POST' | 'PUT', url: string, payload?: Record<string, unknown>) {
  return context.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

/** A tenant with locations A and B (owner's view) and a User scoped to A only. */
async function world() {
  const tenant = await context.world.tenant();
  const [a, b, c] = [await tenant.location({ name: 'A' }), await tenant.location({ name: 'B' }), await tenant.location({ name: 'C' })];
  const member = await addMember(context, tenant, 'User');
  await context.database.db
    .updateTable('companyUsers')
    .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [a, c] })
    .where('userId', '=', member.userId)
    .where('companyId', '=', tenant.companyId)
    .execute();
  return { tenant, owner: tenant.dashboard, scoped: member.headers, a, b, c };
}

const sorted = (ids: string[]) => [...ids].sort();

for (const kind of ['service', 'resource'] as const) {
  const base = kind === 'service' ? { name: 'Consult', duration: 30 } : { name: 'Ann' };

  test(`a scoped user's ${kind} locationIds write keeps the links outside their scope`, async () => {
    const w = await world();
    const record = await w.tenant[kind]({ ...base, locationIds: [w.a, w.b] });

    // Their view: only their own location.
    const seen = json(await call(w.scoped, 'GET', `/v3/${kind}/${record}`));
    assert.deepEqual(seen.locationIds, [w.a]);
    assert.deepEqual(seen.locations.map((l: { id: string }) => l.id), [w.a]);
    const listed = json(await call(w.scoped, 'GET', `/v3/${kind}s?include=locations`));
    assert.deepEqual(listed.data.find((r: { id: string }) => r.id === record).locationIds, [w.a]);

    // Adding C and dropping A leaves B.
    const changed = await call(w.scoped, 'PUT', `/v3/${kind}/${record}`, { locationIds: [w.c] });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(json(changed).locationIds, [w.c]);
    const ownerView = json(await call(w.owner, 'GET', `/v3/${kind}/${record}`));
    assert.deepEqual(sorted(ownerView.locationIds), sorted([w.b, w.c]));

    // An empty list removes only theirs.
    const emptied = await call(w.scoped, 'PUT', `/v3/${kind}/${record}`, { ...base, locationIds: [w.c, w.a] });
    assert.equal(emptied.statusCode, 200, emptied.body);
    assert.deepEqual(sorted(json(await call(w.owner, 'GET', `/v3/${kind}/${record}`)).locationIds), sorted([w.a, w.b, w.c]));
  });

  test(`a scoped user cannot add a ${kind} link to a location outside their scope (403 LOCATION-112)`, async () => {
    const w = await world();
    const record = await w.tenant[kind]({ ...base, locationIds: [w.a] });
    const refused = await call(w.scoped, 'PUT', `/v3/${kind}/${record}`, { locationIds: [w.a, w.b] });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(json(refused).code, 'LOCATION-112');
    assert.deepEqual(json(await call(w.owner, 'GET', `/v3/${kind}/${record}`)).locationIds, [w.a]);
  });
}

test('GET /v3/notifications?appointmentId= another company\'s or an unknown id is a 400 naming it', async () => {
  const w = await world();
  const foreign = randomUUID();
  const response = await call(w.owner, 'GET', `/v3/notifications?appointmentId=${foreign}`);
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.deepEqual(body.errors.map((e: { location: string; path: string }) => [e.location, e.path]), [['query', 'appointmentId']]);
  assert.match(body.message, new RegExp(foreign));
});
