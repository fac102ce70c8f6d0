// GET /v3/availability?timezone=: dates read and availableDays reported in another IANA zone; slots
// stay UTC instants and are the location's schedule.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, dayAhead, setup } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const NEW_YORK = 'America/New_York';
const TOKYO = 'Asia/Tokyo';

function search(s: Setup, query: Record<string, string>) {
  const params = new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, ...query });
  return context.app.inject({ method: 'GET', url: `/v3/availability?${params}`, headers: s.headers });
}

interface Answer {
  timezoneName: string;
  availableTimes: Array<{ startTime: string }>;
  availableDays: Array<{ date: string; available: boolean; reason: string | null }>;
}

test('timezone reads the dates in that zone: a Tokyo day covers the New York slots inside it', async () => {
  const s = await setup(context, { zone: NEW_YORK });
  const date = dayAhead(10, TOKYO);
  const response = await search(s, { startDate: date, timezone: TOKYO });
  assert.equal(response.statusCode, 200, response.body);
  const answer = json<Answer>(response);
  assert.equal(answer.timezoneName, NEW_YORK, 'timezoneName stays the location\'s');
  const dayStart = DateTime.fromISO(date, { zone: TOKYO });
  const expected: string[] = [];
  // The location opens 09:00-17:00 New York time every day; hourly slots whose start is in the Tokyo day.
  for (let hour = 0; hour < 24; hour++) {
    const start = dayStart.plus({ hours: hour });
    const local = start.setZone(NEW_YORK);
    if (local.hour >= 9 && local.hour < 17) expected.push(start.toUTC().toISO()!);
  }
  assert.ok(expected.length > 0);
  assert.deepEqual(answer.availableTimes.map((t) => DateTime.fromISO(t.startTime).toUTC().toISO()), expected);
  assert.deepEqual(answer.availableDays, [{ date, available: true, reason: null }]);
});

test('without timezone the same date means the location\'s day', async () => {
  const s = await setup(context, { zone: NEW_YORK });
  const date = dayAhead(10, NEW_YORK);
  const answer = json<Answer>(await search(s, { startDate: date }));
  const starts = answer.availableTimes.map((t) => DateTime.fromISO(t.startTime, { zone: NEW_YORK }));
  assert.equal(starts.length, 8);
  assert.ok(starts.every((t) => t.toISODate() === date));
});

test('an unknown timezone is a 400 AVAILABILITY-108 at query timezone', async () => {
  const s = await setup(context, { zone: NEW_YORK });
  const body = assertBadRequest(await search(s, { startDate: dayAhead(10), timezone: 'Mars/Olympus' }), 'AVAILABILITY-108');
  assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'timezone']]);
});
