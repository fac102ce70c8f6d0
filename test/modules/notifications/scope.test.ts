// The notifications log holds customers' contact details: a location-scoped user sees only the
// messages of their locations' appointments, as with the appointments themselves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY } from '../../helpers/world.js';
import { create, dayAhead, setup, slot } from '../appointments/fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { dedicatedDatabase: true, sharedOwner: true });
});
after(() => context.close());

test('a location-scoped user reads only the notifications of their locations', async () => {
  const tenant = await context.world.tenant();
  const s = await setup(context, { tenant });
  const other = await tenant.location({ name: 'Other', hours: EVERY_DAY });
  const booked = await create(s, slot(dayAhead(), '10:00'));
  await context.app.dispatcher.drain();
  const all = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: s.headers }));
  assert.ok(all.total >= 1);

  const member = await addMember(context, tenant, 'User');
  await context.database.db
    .updateTable('companyUsers')
    .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [other] })
    .where('userId', '=', member.userId)
    .where('companyId', '=', tenant.companyId)
    .execute();
  assert.equal((await context.app.inject({ method: 'GET', url: `/v3/appointment/${booked.id}`, headers: member.headers })).statusCode, 404);
  const scoped = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: member.headers }));
  assert.equal(scoped.total, 0);
  assert.deepEqual(scoped.data, []);

  await context.database.db
    .updateTable('companyUsers')
    .set({ allowedLocationIds: [other, s.locationId] })
    .where('userId', '=', member.userId)
    .where('companyId', '=', tenant.companyId)
    .execute();
  const widened = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: member.headers }));
  assert.equal(widened.total, all.total);
});
