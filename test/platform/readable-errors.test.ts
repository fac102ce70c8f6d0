// Messages a developer can act on: no raw regular expression, a time or date-time format said with
// an example, and a JSON text sent as a form told so instead of misleading field errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { JSON_AS_FORM_MESSAGE } from '../../src/platform/http/form-body.js';
import type { TenantFixture } from '../helpers/world.js';

let context: TestContext;
let tenant: TenantFixture;
let locationId: string;
before(async () => {
  context = await createTestContext();
  tenant = await context.world.tenant();
  locationId = await tenant.location();
});
after(() => context.close());

function messages(response: LightMyRequestResponse): string[] {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  return body.errors.map((e: { msg: string }) => e.msg);
}

test('a status list names the allowed values instead of the pattern', async () => {
  const response = await context.app.inject({ method: 'GET', url: '/v3/appointments?status=BK,XX', headers: tenant.dashboard });
  assert.deepEqual(messages(response), ['status must be IN, RS, BK, CN or RE (several separated by commas)']);
});

test('a time like 9:00 is told to use HH:MM with an example', async () => {
  const response = await context.app.inject({
    method: 'POST',
    url: '/v3/unavailability/recurringBlock',
    headers: tenant.dashboard,
    payload: { LocationId: locationId, name: 'Meeting', frequency: 'DAILY', startDate: '2030-01-07', startTime: '9:00', endTime: '10:00', iana: 'Europe/London' },
  });
  assert.deepEqual(messages(response), ['startTime must use HH:MM, for example 09:00']);
});

test('a date-time without an offset is told to add one, with an example', async () => {
  const response = await context.app.inject({
    method: 'POST',
    url: '/v3/unavailability/blocks',
    headers: tenant.dashboard,
    payload: { LocationId: locationId, startTime: '2030-01-07T10:00:00', endTime: '2030-01-07T11:00:00+00:00', reason: 'Training' },
  });
  assert.deepEqual(messages(response), ['startTime must be an ISO 8601 date-time with an offset, for example 2026-11-27T10:00:00-05:00']);
});

test('weekly hours, dates, zones and countries: readable, and never a regular expression', async () => {
  const response = await context.app.inject({
    method: 'POST',
    url: '/v3/location',
    headers: tenant.dashboard,
    payload: { name: 'X', timezoneName: 'Mars/Base', address: { country: 'G1' }, weeklyAvailability: { mon: [{ start: '9', end: '17:00' }] } },
  });
  const texts = messages(response);
  assert.ok(texts.includes('timezoneName must be an IANA time zone name, for example America/New_York'), texts.join('\n'));
  assert.ok(texts.includes('address.country must be a two-letter ISO 3166-1 country code, for example GB'), texts.join('\n'));
  assert.ok(texts.includes('weeklyAvailability.mon.0.start must use HH:MM, for example 09:00'), texts.join('\n'));
  for (const text of texts) assert.doesNotMatch(text, /\^|\$|\[0-9\]|must match pattern/);
  const dates = await context.app.inject({ method: 'GET', url: `/v3/availability?LocationId=${locationId}&ServiceId=${locationId}&startDate=27-11-2026`, headers: tenant.dashboard });
  assert.deepEqual(messages(dates), ['startDate must be a date as YYYY-MM-DD, for example 2026-11-27']);
});

test('JSON sent as a form (curl -d without a Content-Type) is a 400 that says so', async () => {
  for (const url of ['/v3/location', '/v3/oauth/token']) {
    const response = await context.app.inject({
      method: 'POST',
      url,
      headers: { ...tenant.dashboard, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '{"name": "Main", "timezoneName": "Europe/London"}',
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(json(response), { success: false, message: JSON_AS_FORM_MESSAGE, errors: [] });
  }
  // A real form still works where forms are taken.
  const form = await context.app.inject({ method: 'POST', url: '/v3/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials&client_id=nobody&client_secret=x' });
  assert.equal(form.statusCode, 401, form.body);
});
