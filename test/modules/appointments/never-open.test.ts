// A time that was never open is refused with a message that says so, distinct from BOOKING-105 (a
// slot someone took); availableDays names the holiday that closes a day.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { LONDON, WEEKDAYS_9_TO_17 } from '../../helpers/world.js';
import { assertBadRequest, create, dayAhead, request, setup, slot } from './fixtures.js';
import type { Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

/** Open 09:00-17:00 on weekdays only. */
async function weekdaysOnly(): Promise<Setup> {
  return setup(context, { hours: WEEKDAYS_9_TO_17 });
}

/** The next date at least a week ahead with this ISO weekday (1 Monday .. 7 Sunday). */
function next(weekday: number): string {
  let day = DateTime.fromISO(dayAhead(8), { zone: LONDON });
  while (day.weekday !== weekday) day = day.plus({ days: 1 });
  return day.toISODate()!;
}

test('a slot someone took is BOOKING-105 "no longer available"', async () => {
  const s = await weekdaysOnly();
  await create(s, slot(next(2), '10:00'));
  const body = assertBadRequest(await request(s, 'create', slot(next(2), '10:00')), 'BOOKING-105');
  assert.match(body.message, /no longer available/);
});

test('a closed day, a time outside the hours and a time off the grid are "not open", without BOOKING-105', async () => {
  const s = await weekdaysOnly();
  for (const body of [slot(next(6), '10:00'), slot(next(2), '18:00'), slot(next(2), '07:00'), slot(next(2), '10:30')]) {
    const refused = assertBadRequest(await request(s, 'hold', body));
    assert.equal(refused.code, undefined);
    assert.match(refused.message, /not open for booking/);
    assert.deepEqual(refused.errors.map((e) => e.path), ['Unavailability.startTime']);
  }
});

test('a holiday: the booking names it, and availableDays says holiday with its name', async () => {
  const s = await weekdaysOnly();
  const date = next(3);
  const holiday = await context.app.inject({ method: 'POST', url: '/v3/unavailability/holiday', headers: s.headers, payload: { LocationId: s.locationId, date, name: 'Founders Day' } });
  assert.equal(holiday.statusCode, 201, holiday.body);
  const refused = assertBadRequest(await request(s, 'create', slot(date, '10:00')));
  assert.equal(refused.code, undefined);
  assert.match(refused.message, new RegExp(`not open for booking: ${date} is a holiday at this location \\(Founders Day\\)`));

  const params = new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, startDate: date, endDate: DateTime.fromISO(date).plus({ days: 1 }).toISODate()! });
  const answer = json(await context.app.inject({ method: 'GET', url: `/v3/availability?${params}`, headers: s.headers }));
  assert.deepEqual(answer.availableDays[0], { date, available: false, reason: 'holiday', holidayName: 'Founders Day' });
  assert.equal(answer.availableDays[1].available, true);
});
