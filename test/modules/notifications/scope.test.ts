// The notifications log holds customers' contact details: a location-scoped user sees only the
// messages of their locations' appointments, as with the appointments themselves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json, signup } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY, create, dayAhead, newTenant, post, setup, slot } from '../appointments/fixtures.js';

let context: TestContext;
let owner: Awaited<ReturnType<typeof signup>>;
before(async () => {
  context = await createTestContext({}, { dedicatedDatabase: true });
  owner = await signup(context.app, 'owner');
});
after(() => context.close());

test('a location-scoped user reads only the notifications of their locations', async () => {
  const tenant = await newTenant(context, owner);
  const s = await setup(context, tenant);
  const other = await post(context, s.headers, '/v3/location', { name: 'Other', timezoneName: 'Europe/London', weeklyAvailability: EVERY_DAY });
  const booked = await create(s, slot(dayAhead(), '10:00'));
  await context.app.dispatcher.drain();
  const all = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: s.headers }));
  assert.ok(all.total >= 1);

  const member = await addMember(context, tenant, 'User');
  await context.database.db
    .updateTable('companyUsers')
    .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [other.id] })
    .where('userId', '=', member.userId)
    .where('companyId', '=', tenant.companyId)
    .execute();
  assert.equal((await context.app.inject({ method: 'GET', url: `/v3/appointment/${booked.id}`, headers: member.headers })).statusCode, 404);
  const scoped = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: member.headers }));
  assert.equal(scoped.total, 0);
  assert.deepEqual(scoped.data, []);

  await context.database.db
    .updateTable('companyUsers')
    .set({ allowedLocationIds: [other.id, s.locationId] })
    .where('userId', '=', member.userId)
    .where('companyId', '=', tenant.companyId)
    .execute();
  const widened = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: member.headers }));
  assert.equal(widened.total, all.total);
});
