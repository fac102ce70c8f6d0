// Races found in review: concurrent confirms of a reservation, and daily limits of a service
// offered at locations in different time zones. Races only show on PostgreSQL (the embedded
// database runs one transaction at a time), but the rules hold on both.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { EVERY_DAY } from '../../helpers/world.js';
import { dayAhead, events, hold, operate, setup, slot } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

test('concurrent confirms and books of a reservation book it once: one NEW_APPOINTMENT, one APPOINTMENT_CONFIRMED', async () => {
  const s = await setup(context);
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
  const tenant = await context.world.tenant();
  const kiritimati = await tenant.location({ name: 'A', timezone: 'Pacific/Kiritimati', hours: EVERY_DAY });
  const pagoPago = await tenant.location({ name: 'B', timezone: 'Pacific/Pago_Pago', hours: EVERY_DAY });
  const service = await tenant.service({ name: 'S', locationIds: [kiritimati, pagoPago], dailyBookingLimitCount: 1 });
  const resourceA = await tenant.resource({ name: 'rA', locationIds: [kiritimati], serviceIds: [service] });
  const resourceB = await tenant.resource({ name: 'rB', locationIds: [pagoPago], serviceIds: [service] });
  const customer = () => tenant.customer({ firstName: 'C', email: `c-${randomUUID()}@example.com` });
  const book = async (locationId: string, resourceId: string, start: DateTime) =>
    context.app.inject({
      method: 'POST',
      url: `/v3/appointment?LocationId=${locationId}&ServiceId=${service}`,
      headers: tenant.dashboard,
      payload: { ResourceIds: [resourceId], CustomerId: await customer(), Unavailability: { startTime: start.toISO(), endTime: start.plus({ minutes: 60 }).toISO() } },
    });
  for (let k = 0; k < 3; k++) {
    // 09:00 on day D in Kiritimati (UTC+14) and 10:00 on D-1 in Pago Pago (UTC-11) are one hour
    // apart, so they fall on the same local day of the location that counts them.
    const day = DateTime.now().setZone('Pacific/Kiritimati').startOf('day').plus({ days: 10 + k });
    const inA = DateTime.fromISO(`${day.toISODate()}T09:00`, { zone: 'Pacific/Kiritimati' });
    const inB = DateTime.fromISO(`${day.minus({ days: 1 }).toISODate()}T10:00`, { zone: 'Pacific/Pago_Pago' });
    const answers = await Promise.all([book(kiritimati, resourceA, inA), book(pagoPago, resourceB, inB)]);
    const statuses = answers.map((a) => a.statusCode).sort();
    assert.deepEqual(statuses, [201, 400], answers.map((a) => a.body).join('\n'));
  }
});
