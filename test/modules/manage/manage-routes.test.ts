// The customer's manage link (docs/api.md, Customer self-service): the token opens its own
// appointment's /v3/manage/* routes and nothing else; forged, expired, unknown and spent links are
// refused with a clear answer; cancel and reschedule keep the booking rules and the service's notice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { SignJWT } from 'jose';
import { DateTime } from 'luxon';
import { createTestContext, json, TEST_SECRETS } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { create, dayAhead, freeTimes, setup, slot } from '../appointments/fixtures.js';
import type { Appointment, Setup } from '../appointments/fixtures.js';
import { createTokenService } from '../../../src/platform/auth/tokens.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const tokens = createTokenService(TEST_SECRETS, { machineTokenTtlSeconds: 3600, dashboardTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 3600, docsTokenTtlSeconds: 3600 });
const tokenFor = (a: { companyId: string; id: string; endTime: string }) => tokens.signManageToken({ companyId: a.companyId, appointmentId: a.id }, new Date(a.endTime));

/** A manage token signed by hand: `secret` (default: the service's), `exp` in epoch seconds. */
function handMade(claims: { companyId: string; appointmentId: string }, options: { secret?: string; exp?: number } = {}) {
  return new SignJWT({ token_use: 'manage', company_id: claims.companyId, appointment_id: claims.appointmentId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer('service:v3-api')
    .setAudience('manage')
    .setIssuedAt()
    .setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 3600)
    .sign(new TextEncoder().encode(options.secret ?? TEST_SECRETS.MANAGE_TOKEN_SECRET));
}

function call(token: string, method: 'GET' | 'POST', path: string, payload?: Record<string, unknown>) {
  return context.app.inject({ method, url: `/v3/manage/${path}`, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
}

function assertRefused(response: LightMyRequestResponse, status: number, message: RegExp) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.match(body.message, message);
}

async function booked(s: Setup, days = 14, time = '10:00'): Promise<Appointment> {
  return create(s, slot(dayAhead(days), time));
}

describe('the manage token', () => {
  test('opens its appointment: service, location, resources, and what the customer may do now', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const response = await call(await tokenFor(appointment), 'GET', 'appointment');
    assert.equal(response.statusCode, 200, response.body);
    const view = json(response);
    assert.equal(view.id, appointment.id);
    assert.equal(view.status, 'BK');
    assert.equal(view.startTime, appointment.startTime);
    assert.equal(view.endTime, appointment.endTime);
    assert.equal(view.service.name, 'Consult');
    assert.equal(view.location.id, s.locationId);
    assert.equal(view.location.timezoneName, s.zone);
    assert.deepEqual(view.resources.map((r: { id: string }) => r.id), [s.resourceIds[0]]);
    assert.deepEqual(view.cancel, { allowed: true, reason: null });
    assert.deepEqual(view.reschedule, { allowed: true, reason: null });
    assert.equal(view.customerId, undefined, 'no internal ids beyond the catalog the page shows');
  });

  test('forged (another secret), altered, malformed or missing: 401 with a clear message', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const claims = { companyId: appointment.companyId, appointmentId: appointment.id };
    const forged = await handMade(claims, { secret: 'someone-elses-secret-0123456789abcdef0123456789' });
    assertRefused(await call(forged, 'GET', 'appointment'), 401, /^Invalid manage link/);
    const genuine = await tokenFor(appointment);
    const [header, payload, signature] = genuine.split('.');
    const altered = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), appointment_id: s.customerId })).toString('base64url')}.${signature}`;
    assertRefused(await call(altered, 'POST', 'appointment/cancel'), 401, /^Invalid manage link/);
    assertRefused(await call('not-a-token', 'GET', 'appointment'), 401, /^Invalid manage link/);
    assertRefused(await context.app.inject({ method: 'GET', url: '/v3/manage/appointment' }), 401, /Missing Authorization header/);
    // The company's own credentials are not manage links either.
    const dashboard = await context.app.inject({ method: 'GET', url: '/v3/manage/appointment', headers: s.headers });
    assertRefused(dashboard, 401, /^Invalid manage link/);
    assert.equal((await context.app.inject({ method: 'GET', url: `/v3/appointment/${appointment.id}`, headers: s.headers })).json().status, 'BK');
  });

  test('expired (a day after the appointment ended): 401 that says so', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const expired = await handMade({ companyId: appointment.companyId, appointmentId: appointment.id }, { exp: Math.floor(Date.now() / 1000) - 60 });
    assertRefused(await call(expired, 'GET', 'appointment'), 401, /expired/);
    assertRefused(await call(expired, 'POST', 'appointment/cancel'), 401, /expired/);
    // The lifetime: the appointment's end plus one day.
    const genuine = await tokenFor(appointment);
    const exp = JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString()).exp;
    assert.equal(exp, Date.parse(appointment.endTime) / 1000 + 86_400);
  });

  test('another company\'s id with this appointment, or an appointment that does not exist: 401; a token for A never reaches B', async () => {
    const s = await setup(context);
    const other = await setup(context);
    const a = await booked(s, 14, '10:00');
    const b = await booked(s, 14, '12:00');
    const otherCompany = await handMade({ companyId: other.tenant.companyId, appointmentId: a.id });
    assertRefused(await call(otherCompany, 'GET', 'appointment'), 401, /names no appointment of this company/);
    const unknown = await handMade({ companyId: s.tenant.companyId, appointmentId: s.customerId });
    assertRefused(await call(unknown, 'GET', 'appointment'), 401, /names no appointment/);

    // The routes have no id to change: A's token reads and cancels A; B stays as it was.
    const tokenA = await tokenFor(a);
    assert.equal(json(await call(tokenA, 'GET', 'appointment')).id, a.id);
    const cancelled = await call(tokenA, 'POST', 'appointment/cancel');
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    assert.equal(json(cancelled).id, a.id);
    const stillB = await context.app.inject({ method: 'GET', url: `/v3/appointment/${b.id}`, headers: s.headers });
    assert.equal(json(stillB).status, 'BK');
    // Query or body ids are not accepted either.
    const tokenB = await tokenFor(b);
    assert.equal((await context.app.inject({ method: 'GET', url: `/v3/manage/appointment?id=${a.id}`, headers: { authorization: `Bearer ${tokenB}` } })).json().id, b.id);
  });

  test('a manage token opens no other route: company and public routes answer 401', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const token = await tokenFor(appointment);
    const headers = { authorization: `Bearer ${token}` };
    for (const url of [`/v3/appointment/${appointment.id}`, '/v3/appointments', '/v3/company']) {
      assertRefused(await context.app.inject({ method: 'GET', url, headers }), 401, /manage link token opens only its own appointment/);
    }
    assertRefused(await context.app.inject({ method: 'PUT', url: `/v3/appointment/${appointment.id}/cancel`, headers }), 401, /manage link/);
    assert.equal((await context.app.inject({ method: 'GET', url: '/v3/public/company', headers })).statusCode, 401);
  });
});

describe('caching', () => {
  test('every answer, refusals included, is no-store: a browser cache keys by URL, not by the token in the header', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const token = await tokenFor(appointment);
    const answers = [
      await call(token, 'GET', 'appointment'),
      await call(token, 'GET', `availability?startDate=${dayAhead(15)}`),
      await call('not-a-token', 'GET', 'appointment'),
      await call(token, 'POST', 'appointment/cancel'),
      await call(token, 'GET', 'appointment'),
    ];
    assert.deepEqual(answers.map((r) => r.statusCode), [200, 200, 401, 200, 410]);
    for (const answer of answers) assert.equal(answer.headers['cache-control'], 'no-store', `${answer.statusCode} ${answer.body}`);
  });
});

describe('cancel through the link', () => {
  test('cancels (CN) and the link is spent: every manage route then answers 410 saying it was cancelled', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const token = await tokenFor(appointment);
    const response = await call(token, 'POST', 'appointment/cancel');
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).status, 'CN');
    assert.equal(json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${appointment.id}`, headers: s.headers })).status, 'CN');
    // Replayed: the same answer every time, for every route.
    assertRefused(await call(token, 'POST', 'appointment/cancel'), 410, /was cancelled/);
    assertRefused(await call(token, 'GET', 'appointment'), 410, /was cancelled/);
    assertRefused(await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(15), '10:00')), 410, /was cancelled/);
    assertRefused(await call(token, 'GET', `availability?startDate=${dayAhead(15)}`), 410, /was cancelled/);
  });

  test('within the service\'s notice (bookInAdvance), cancel and reschedule are refused with the reason, and the view says so', async () => {
    const s = await setup(context);
    const appointment = await booked(s, 2);
    // The service now asks a week's notice; the appointment is two days away.
    await context.database.db.updateTable('services').set({ bookInAdvance: 10_080 }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.serviceId).execute();
    const token = await tokenFor(appointment);
    const view = json(await call(token, 'GET', 'appointment'));
    assert.equal(view.cancel.allowed, false);
    assert.match(view.cancel.reason, /at least 10080 minutes before/);
    assert.equal(view.reschedule.allowed, false);
    assertRefused(await call(token, 'POST', 'appointment/cancel'), 400, /at least 10080 minutes before the appointment starts/);
    assertRefused(await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(20), '10:00')), 400, /at least 10080 minutes/);
    assert.equal(json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${appointment.id}`, headers: s.headers })).status, 'BK');
  });
});

describe('reschedule through the link', () => {
  test('moves the appointment (RE + a new BK); the old link answers 410 saying it was moved, the new token opens the new one', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const token = await tokenFor(appointment);
    const response = await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(15), '11:00'));
    assert.equal(response.statusCode, 200, response.body);
    const { appointment: moved, manageToken } = json(response);
    assert.notEqual(moved.id, appointment.id);
    assert.equal(moved.status, 'BK');
    assert.equal(moved.startTime, new Date(slot(dayAhead(15), '11:00').Unavailability.startTime).toISOString());
    assert.deepEqual(moved.resources.map((r: { id: string }) => r.id), appointment.resourceIds, 'the resources are kept');

    const old = json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${appointment.id}`, headers: s.headers }));
    assert.equal(old.status, 'RE');
    assert.equal(old.rescheduledToId, moved.id);
    assertRefused(await call(token, 'GET', 'appointment'), 410, /was moved to a new time/);
    assertRefused(await call(token, 'POST', 'appointment/cancel'), 410, /was moved/);
    assertRefused(await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(16), '11:00')), 410, /was moved/);

    assert.equal(json(await call(manageToken, 'GET', 'appointment')).id, moved.id);
  });

  test('the slot rules hold: a taken or closed time is refused as in the company route; the body takes no overrides', async () => {
    const s = await setup(context);
    const appointment = await booked(s, 14, '10:00');
    await booked(s, 14, '13:00');
    const token = await tokenFor(appointment);
    const taken = await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(14), '13:00'));
    assert.equal(taken.statusCode, 400, taken.body);
    const closed = await call(token, 'POST', 'appointment/reschedule', slot(dayAhead(14), '20:00'));
    assert.equal(closed.statusCode, 400, closed.body);
    const override = await call(token, 'POST', 'appointment/reschedule', { ...slot(dayAhead(15), '10:00'), allowPaddingOverflow: true });
    assert.equal(override.statusCode, 400, override.body);
    assert.equal(json(await call(token, 'GET', 'appointment')).status, 'BK', 'nothing moved');
  });

  test('the slot picker answers the appointment\'s service at its location, as the company search does', async () => {
    const s = await setup(context);
    const appointment = await booked(s);
    const token = await tokenFor(appointment);
    const date = dayAhead(20);
    const response = await call(token, 'GET', `availability?startDate=${date}`);
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.timezoneName, s.zone);
    const times = body.availableTimes.map((t: { startTime: string }) => DateTime.fromISO(t.startTime, { zone: s.zone }).toFormat('HH:mm'));
    assert.deepEqual(times, await freeTimes(s, date));
    assert.ok(times.length > 0);
    // Location and service are always the appointment's: a LocationId sent anyway changes nothing.
    const picked = await call(token, 'GET', `availability?startDate=${date}&LocationId=${s.customerId}`);
    assert.equal(picked.statusCode, 200, picked.body);
    assert.deepEqual(json(picked), body);
  });
});
