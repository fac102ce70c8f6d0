// GET /v3/mapping/ids (core-interface.md "Migration and mapping"; decisions.md "Migration"):
// v1 ids in, v3 ids out; only the keys asked; scalars a UUID or null; allocationId always an
// array; only the caller's company; Owners and Admins of the company, never machine tokens.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { create, dayAhead, setup, slot } from '../appointments/fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

async function mapping(headers: Record<string, string>, query: Record<string, string>) {
  return context.app.inject({ method: 'GET', url: `/v3/mapping/ids?${new URLSearchParams(query)}`, headers });
}

test('v1 ids map to the v3 records that keep them, only the keys asked, allocationId always an array', async () => {
  const s = await setup(context);
  const { tenant } = s;
  const locationId = await tenant.location({ name: 'Downtown Studio', legacyId: '12' });
  const serviceId = await tenant.service({ name: 'Yoga', legacyId: '302' });
  const resourceId = await tenant.resource({ name: 'Ana Lopez', legacyId: '1501' });
  const customerId = await tenant.customer({ firstName: 'Cara', email: `cara-${Date.now()}@example.com`, legacyId: '7001' });
  const appointment = await create(s, { ...slot(dayAhead(9), '10:00', 60, s.zone), legacyId: '90001' });
  const set = async (path: string, query: string, allocations: unknown[]) => {
    const response = await context.app.inject({ method: 'POST', url: `${path}?${query}`, headers: s.headers, payload: { allocations } });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: Array<{ id: string }> }>(response).data.map((row) => row.id);
  };
  // One v1 allocation (id 55) became two weekly rows and one single row.
  const weekly = await set('/v3/weeklyAllocation/setWeeklyAllocations', `LocationId=${locationId}`, [
    { day: 'tue', start: '18:00', end: '21:00', legacyId: '55' },
    { day: 'thu', start: '18:00', end: '21:00', legacyId: '55' },
  ]);
  const single = await set('/v3/singleAllocation/setSingleAllocations', `LocationId=${locationId}`, [{ date: dayAhead(20), start: '10:00', end: '12:00', legacyId: '55' }]);

  const all = await mapping(s.headers, { locationId: '12', serviceId: '302', resourceId: '1501', customerId: '7001', appointmentId: '90001', allocationId: '55' });
  assert.equal(all.statusCode, 200, all.body);
  const body = json(all);
  assert.deepEqual({ ...body, allocationId: [...body.allocationId].sort() }, {
    locationId,
    serviceId,
    resourceId,
    customerId,
    appointmentId: appointment.id,
    allocationId: [...weekly, ...single].sort(),
  });

  // Only the keys asked; unknown ids are null (scalars) or [] (allocationId).
  assert.deepEqual(json(await mapping(s.headers, { serviceId: '302' })), { serviceId });
  assert.deepEqual(json(await mapping(s.headers, { resourceId: '999', allocationId: '999' })), { resourceId: null, allocationId: [] });
  // v1 ids are numbers in some v1 documents: "0012" is location 12.
  assert.deepEqual(json(await mapping(s.headers, { locationId: '0012' })), { locationId });
});

test('another company\'s v1 ids are not found, and a bad query is a 400', async () => {
  const owner = await setup(context);
  await owner.tenant.location({ name: 'Theirs', legacyId: 'shared-12' });
  const stranger = await setup(context);
  assert.deepEqual(json(await mapping(stranger.headers, { locationId: 'shared-12' })), { locationId: null });
  const empty = await mapping(stranger.headers, {});
  assert.equal(empty.statusCode, 400);
  assert.match(json(empty).message, /at least one v1 id/);
  const unknownKey = await mapping(stranger.headers, { groupId: '1' });
  assert.equal(unknownKey.statusCode, 400);
});

test('Owners and Admins only: a User-role member and a machine token get 403', async () => {
  const s = await setup(context);
  const admin = await addMember(context, s.tenant, 'Admin');
  assert.equal((await mapping(admin.headers, { locationId: '1' })).statusCode, 200);
  const user = await addMember(context, s.tenant, 'User');
  assert.equal((await mapping(user.headers, { locationId: '1' })).statusCode, 403);
  const token = await machineToken(context.app, s.tenant);
  const machine = await mapping({ authorization: `Bearer ${token}` }, { locationId: '1' });
  assert.equal(machine.statusCode, 403);
  assert.match(json(machine).message, /Machine tokens cannot use migration workflows/);
});
