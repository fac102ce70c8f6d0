// Races found in review: concurrent confirms of a reservation, and daily limits of a service
// offered at locations in different time zones. Races only show on PostgreSQL (the embedded
// database runs one transaction at a time), but the rules hold on both.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { createTestContext, signup } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY, dayAhead, events, hold, newTenant, operate, post, setup, slot } from './fixtures.js';

let context: TestContext;
let owner: Awaited<ReturnType<typeof signup>>;
before(async () => {
  context = await createTestContext();
  owner = await signup(context.app, 'owner');
});
after(() => context.close());

test('concurrent confirms and books of a reservation book it once: one NEW_APPOINTMENT, one APPOINTMENT_CONFIRMED', async () => {
  const s = await setup(context, await newTenant(context, owner));
  for (const time of ['09:00', '11:00', '13:00']) {
    const held = await hold(s, slot(dayAhead(), time));
    assert.equal((await operate(s, held.id, 'reserve', {})).statusCode, 200);
    const answers = await Promise.all([operate(s, held.id, 'confirm'), operate(s, held.id, 'confirm'), operate(s, held.id, 'book', {})]);
    const confirms = answers.slice(0, 2);
    for (const answer of confirms) assert.equal(answer.statusCode, 200, answer.body);
    // book either won (200) or found it booked already (400 BOOKING-108)
    assert.ok([200, 400].includes(answers[2]!.statusCode), answers[2]!.body);
    assert.deepEqual((await events(s, held.id)).sort(), ['APPOINTMENT_CONFIRMED', 'NEW_APPOINTMENT']);
  }
});

test('a daily limit holds across locations in different zones, even for concurrent bookings', async () => {
  const headers = (await newTenant(context, owner)).dashboard;
  const kiritimati = await post(context, headers, '/v3/location', { name: 'A', timezoneName: 'Pacific/Kiritimati', weeklyAvailability: EVERY_DAY });
  const pagoPago = await post(context, headers, '/v3/location', { name: 'B', timezoneName: 'Pacific/Pago_Pago', weeklyAvailability: EVERY_DAY });
  const service = await post(context, headers, '/v3/service', { name: 'S', duration: 60, locationIds: [kiritimati.id, pagoPago.id], dailyBookingLimitCount: 1 });
  const resourceA = await post(context, headers, '/v3/resource', { name: 'rA', locationIds: [kiritimati.id], serviceIds: [service.id] });
  const resourceB = await post(context, headers, '/v3/resource', { name: 'rB', locationIds: [pagoPago.id], serviceIds: [service.id] });
  const customer = async () => (await post(context, headers, '/v3/customer', { firstName: 'C', email: `c-${randomUUID()}@example.com` })).id;
  const book = async (locationId: string, resourceId: string, start: DateTime) =>
    context.app.inject({
      method: 'POST',
      url: `/v3/appointment?LocationId=${locationId}&ServiceId=${service.id}`,
      headers,
      payload: { ResourceIds: [resourceId], CustomerId: await customer(), Unavailability: { startTime: start.toISO(), endTime: start.plus({ minutes: 60 }).toISO() } },
    });
  for (let k = 0; k < 3; k++) {
    // 09:00 on day D in Kiritimati (UTC+14) and 10:00 on D-1 in Pago Pago (UTC-11) are one hour
    // apart, so they fall on the same local day of the location that counts them.
    const day = DateTime.now().setZone('Pacific/Kiritimati').startOf('day').plus({ days: 10 + k });
    const inA = DateTime.fromISO(`${day.toISODate()}T09:00`, { zone: 'Pacific/Kiritimati' });
    const inB = DateTime.fromISO(`${day.minus({ days: 1 }).toISODate()}T10:00`, { zone: 'Pacific/Pago_Pago' });
    const answers = await Promise.all([book(kiritimati.id, resourceA.id, inA), book(pagoPago.id, resourceB.id, inB)]);
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [201, 400], answers.map((a) => a.body).join('\n'));
  }
});
