// External calendars end to end with Google (its local stand-in, test/helpers/google-stand-in.ts):
// the shared provider story (scenario.ts), and the rules of the OAuth state, the Calendar
// Selection Token, revoked grants, 410 resyncs, 429 and hangs, a crash between booking and
// write-back, and tenant isolation of every route.
//
// The calendar worker and the dispatcher claim every company's work in their database, so this
// file has a database of its own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startGoogleStandIn } from '../../helpers/google-stand-in.js';
import type { GoogleStandIn } from '../../helpers/google-stand-in.js';
import { create, dayAhead, slot } from '../appointments/fixtures.js';
import { PUBLIC_BASE_URL, bearer, calendarSetup, connectWithSelection, externalRows, oauthDance, runProviderStory, settle, syncNow } from './scenario.js';
import type { ProviderHarness } from './scenario.js';

let google: GoogleStandIn;
let context: TestContext;

before(async () => {
  google = await startGoogleStandIn({ timeZone: 'Europe/London' });
  context = await createTestContext(
    {
      GOOGLE_CLIENT_ID: google.clientId,
      GOOGLE_CLIENT_SECRET: google.clientSecret,
      GOOGLE_AUTH_URL: google.urls.authUrl,
      GOOGLE_TOKEN_URL: google.urls.tokenUrl,
      GOOGLE_API_URL: google.urls.apiUrl,
      GOOGLE_REVOKE_URL: google.urls.revokeUrl,
      PUBLIC_BASE_URL,
      EXTERNAL_CALENDAR_TIMEOUT_MS: '1500',
    },
    { dedicatedDatabase: true },
  );
});
after(async () => {
  await context?.close();
  await google?.close();
});

/** Google marks what the story needs: transparency for free, the calendar's own attendee declining. */
function harnessFor(stand: GoogleStandIn): ProviderHarness {
  const when = (d: Date) => ({ dateTime: d.toISOString() });
  return {
    provider: 'google',
    calendarId: stand.primaryCalendarId,
    async addEvent(calendarId, { start, end, kind, title }) {
      return stand.addEvent(calendarId, {
        summary: title ?? kind,
        start: when(start),
        end: when(end),
        ...(kind === 'free' ? { transparency: 'transparent' as const } : {}),
        ...(kind === 'declined' ? { attendees: [{ email: stand.primaryCalendarId, self: true, responseStatus: 'declined' as const }] } : {}),
      });
    },
    async moveEvent(calendarId, eventId, start, end) {
      stand.updateEvent(calendarId, eventId, { start: when(start), end: when(end) });
    },
    async removeEvent(calendarId, eventId) {
      stand.deleteEvent(calendarId, eventId);
    },
    async writtenEvents(calendarId) {
      return stand
        .events(calendarId)
        .filter((e) => e.status !== 'cancelled' && e.extendedProperties?.private?.slotwiseAppointmentId)
        .map((e) => ({ id: e.id, title: e.summary ?? '', description: e.description ?? '', start: new Date(e.start!.dateTime!), end: new Date(e.end!.dateTime!) }));
    },
  };
}

test('Google: connect, select, busy time in and out, write-back, disconnect', async () => {
  await runProviderStory(context, harnessFor(google));
});

describe('the OAuth state', () => {
  test('works once: a reused state is 400, and so are a forged and an expired one', async () => {
    const s = await calendarSetup(context);
    const { callbackPath, location } = await oauthDance(s, 'google', { selection: false });
    assert.equal(location.searchParams.get('status'), 'connected');
    const again = await context.app.inject({ method: 'GET', url: callbackPath });
    assert.equal(again.statusCode, 400);
    assert.match(json(again).errors[0].msg, /already used or has expired/);

    const forged = await context.app.inject({ method: 'GET', url: `/v3/calendar/callback?code=x&state=${'eyJhbGciOiJIUzI1NiJ9.e30.' + 'a'.repeat(43)}` });
    assert.equal(forged.statusCode, 400);
    const missing = await context.app.inject({ method: 'GET', url: '/v3/calendar/callback?code=x' });
    assert.equal(missing.statusCode, 400);

    // A state past its 15 minutes: the stored expiry has passed.
    const created = await context.app.inject({
      method: 'POST',
      url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`,
      headers: s.headers,
      payload: { provider: 'google', redirectUrl: `https://${new URL(location).host}/x` },
    });
    const state = new URL(json(created).authUrl).searchParams.get('state')!;
    await context.database.db.updateTable('externalCalendarConnections').set({ stateExpiresAt: new Date(Date.now() - 1000) }).where('id', '=', json(created).id).execute();
    const expired = await context.app.inject({ method: 'GET', url: `/v3/calendar/callback?code=x&state=${state}` });
    assert.equal(expired.statusCode, 400);
  });

  test('a consent the user declines returns to redirectUrl with status=error, and the connection says so', async () => {
    const s = await calendarSetup(context);
    google.consent = 'deny';
    try {
      const { connection, location } = await oauthDance(s, 'google');
      assert.equal(location.searchParams.get('status'), 'error');
      assert.equal(location.searchParams.get('error'), 'access_denied');
      const list = json(await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars`, headers: s.headers }));
      assert.equal(list.data.find((c: { id: string }) => c.id === connection.id).status, 'error');
    } finally {
      google.consent = 'grant';
    }
  });

  test('a redirectUrl outside the company\'s allowedDomains is 400', async () => {
    const s = await calendarSetup(context);
    const response = await context.app.inject({
      method: 'POST',
      url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`,
      headers: s.headers,
      payload: { provider: 'google', redirectUrl: 'https://evil.example/steal' },
    });
    assert.equal(response.statusCode, 400);
    assert.equal(json(response).errors[0].path, 'redirectUrl');
  });

  test('stored tokens are sealed: nothing in the row reads as the provider\'s token', async () => {
    const s = await calendarSetup(context);
    const { connectionId } = await connectWithSelection(s, harnessFor(google));
    const row = await context.database.db.selectFrom('externalCalendarConnections').selectAll().where('id', '=', connectionId).executeTakeFirstOrThrow();
    assert.match(row.credentialsEnc!, /^v1\./);
    assert.ok(!row.credentialsEnc!.includes('ya29') && !/refresh/i.test(row.credentialsEnc!));
    const listed = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars`, headers: s.headers });
    assert.doesNotMatch(listed.body, /token|credential|password/i);
  });
});

describe('the Calendar Selection Token', () => {
  test('works on list, select and disconnect of its own connection only; 401 everywhere else', async () => {
    const s = await calendarSetup(context);
    const { connectionId, selectionToken } = await connectWithSelection(s, harnessFor(google));
    const token = bearer(selectionToken!);
    const resourceId = s.resourceIds[0]!;
    const other = await calendarSetup(context);
    const otherResource = other.resourceIds[0]!;
    const ownSecond = await s.tenant.resource({ name: 'Second' });

    const refused = [
      { method: 'GET', url: '/v3/resources' },
      { method: 'GET', url: `/v3/resource/${resourceId}` },
      { method: 'GET', url: '/v3/company' },
      { method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars` },
      { method: 'POST', url: `/v3/resource/${resourceId}/externalCalendars/sync` },
      { method: 'POST', url: `/v3/resource/${resourceId}/externalCalendar`, payload: { provider: 'google', redirectUrl: 'https://app.calendar-test.example/' } },
      { method: 'GET', url: `/v3/resource/${ownSecond}/externalCalendars/list` },
      { method: 'GET', url: `/v3/resource/${otherResource}/externalCalendars/list` },
      { method: 'POST', url: `/v3/resource/${ownSecond}/externalCalendars/select`, payload: { calendarIds: [] } },
      { method: 'DELETE', url: `/v3/resource/${resourceId}/externalCalendar/${randomUUID()}` },
      { method: 'DELETE', url: `/v3/resource/${otherResource}/externalCalendar/${connectionId}` },
      { method: 'GET', url: `/v3/appointments` },
    ] as const;
    for (const call of refused) {
      const response = await context.app.inject({ ...call, headers: token });
      assert.equal(response.statusCode, 401, `${call.method} ${call.url}: ${response.body}`);
    }
    const listed = await context.app.inject({ method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars/list?provider=google`, headers: token });
    assert.equal(listed.statusCode, 200, listed.body);
    const gone = await context.app.inject({ method: 'DELETE', url: `/v3/resource/${resourceId}/externalCalendar/${connectionId}`, headers: token });
    assert.equal(gone.statusCode, 204);
    const afterwards = await context.app.inject({ method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars/list`, headers: token });
    assert.equal(afterwards.statusCode, 401, 'the token of a disconnected connection stops at once');
  });

  test('a code works once; a wrong one is 400; an expired token is 401', async () => {
    const s = await calendarSetup(context);
    const { location } = await oauthDance(s, 'google');
    const code = location.searchParams.get('code')!;
    assert.equal((await context.app.inject({ method: 'POST', url: '/v3/calendar/selectionSession', payload: { code } })).statusCode, 200);
    assert.equal((await context.app.inject({ method: 'POST', url: '/v3/calendar/selectionSession', payload: { code } })).statusCode, 400);
    assert.equal((await context.app.inject({ method: 'POST', url: '/v3/calendar/selectionSession', payload: { code: 'csc_nope' } })).statusCode, 400);
    const { SignJWT } = await import('jose');
    const { TEST_SECRETS } = await import('../../helpers/app.js');
    const expired = await new SignJWT({ token_use: 'calendar_selection', company_id: s.tenant.companyId, resource_id: s.resourceIds[0], connection_id: randomUUID() })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('service:v3-api')
      .setAudience('calendar-selection')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 2000)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 1000)
      .sign(new TextEncoder().encode(TEST_SECRETS.CALENDAR_TOKEN_SECRET));
    const response = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/list`, headers: bearer(expired) });
    assert.equal(response.statusCode, 401);
  });

  test('list without provider fails clearly when none or two providers are connected', async () => {
    const s = await calendarSetup(context);
    const none = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/list`, headers: s.headers });
    assert.equal(none.statusCode, 400);
    assert.match(json(none).message, /No external calendar is connected/);
    await connectWithSelection(s, harnessFor(google));
    // A second provider (a pending Microsoft connection does not count; an error one does).
    await context.database.db
      .insertInto('externalCalendarConnections')
      .values({ companyId: s.tenant.companyId, id: randomUUID(), resourceId: s.resourceIds[0]!, provider: 'microsoft', status: 'error', lastError: 'revoked' })
      .execute();
    const two = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/list`, headers: s.headers });
    assert.equal(two.statusCode, 400);
    assert.match(json(two).errors[0].msg, /more than one provider/);
    const named = await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/list?provider=google`, headers: s.headers });
    assert.equal(named.statusCode, 200, named.body);
  });
});

describe('provider failures', () => {
  async function connectedAndSelected() {
    const s = await calendarSetup(context);
    const { connectionId } = await connectWithSelection(s, harnessFor(google));
    const selected = await context.app.inject({
      method: 'POST',
      url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/select`,
      headers: s.headers,
      payload: { calendarIds: [google.primaryCalendarId], writeCalendarId: google.primaryCalendarId },
    });
    assert.equal(selected.statusCode, 200, selected.body);
    return { s, connectionId };
  }
  const connectionOf = (id: string) => context.database.db.selectFrom('externalCalendarConnections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('a revoked refresh token marks the connection error with lastError, and its syncs stop', async () => {
    const { s, connectionId } = await connectedAndSelected();
    // The access token is due for refresh, and the user revoked the grant meanwhile.
    await context.database.db.updateTable('externalCalendarConnections').set({ credentialsEnc: await expiring(connectionId) }).where('id', '=', connectionId).execute();
    google.revokeGrant();
    const response = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/sync`, headers: s.headers });
    assert.equal(response.statusCode, 400);
    assert.match(json(response).message, /connect the calendar again/);
    const list = json(await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars`, headers: s.headers }));
    const shown = list.data.find((c: { id: string }) => c.id === connectionId);
    assert.equal(shown.status, 'error');
    assert.match(shown.lastError, /revoked/);
    assert.equal((await connectionOf(connectionId)).nextSyncAt, null, 'no more scheduled syncs');
  });

  test('a refresh refused because another instance refreshed first uses the tokens that instance stored', async () => {
    const { connectionId } = await connectedAndSelected();
    const row = await connectionOf(connectionId);
    const sessions = context.app.externalCalendars.sessions;
    const mine = sessions.credentialsOf(row);
    // This instance still holds the first grant's tokens, due for refresh...
    const stale = { ...row, credentialsEnc: sessions.seal({ ...mine, ...(mine.kind === 'oauth' ? { expiresAt: Date.now() - 1000 } : {}) }) };
    // ...while another instance stored a second grant's tokens, and the first grant is gone.
    const other = await calendarSetup(context);
    const { connectionId: otherId } = await connectWithSelection(other, harnessFor(google));
    const fresh = await connectionOf(otherId);
    await context.database.db.updateTable('externalCalendarConnections').set({ credentialsEnc: fresh.credentialsEnc }).where('id', '=', connectionId).execute();
    google.revokeGrant(mine.kind === 'oauth' ? mine.refreshToken! : '');
    const calendars = await sessions.run(stale, (session) => session.listCalendars());
    assert.ok(calendars.some((c) => c.id === google.primaryCalendarId));
    assert.equal(stale.credentialsEnc, fresh.credentialsEnc, 'the stored tokens were taken up');
  });

  test('an expired sync token (410) falls back to a full sync that finds the same events', async () => {
    const { s } = await connectedAndSelected();
    const date = dayAhead(12);
    const start = DateTime.fromISO(`${date}T10:00`, { zone: s.zone });
    google.addEvent(google.primaryCalendarId, { summary: 'busy', start: { dateTime: start.toISO()! }, end: { dateTime: start.plus({ hours: 1 }).toISO()! } });
    await syncNow(s);
    google.expireSyncTokens();
    google.addEvent(google.primaryCalendarId, { summary: 'busy 2', start: { dateTime: start.plus({ hours: 2 }).toISO()! }, end: { dateTime: start.plus({ hours: 3 }).toISO()! } });
    const counts = await syncNow(s);
    assert.equal(counts.imported, 1, JSON.stringify(counts));
    assert.equal(counts.removed, 0);
    const requests = google.requests.filter((r) => r.path.includes('/events') && r.method === 'GET');
    assert.ok(requests.some((r) => r.query.has('syncToken')) && requests.at(-1)!.query.has('timeMin'), 'the cursor was tried, then a full read');
  });

  test('a 429 on write-back is retried no sooner than Retry-After, and then succeeds once', async () => {
    const { s } = await connectedAndSelected();
    await settle(context); // the sync that select asked for, so the failure meets the write
    google.failNext({ status: 429, retryAfterSeconds: 300, pathIncludes: '/events' });
    const booked = await create(s, slot(dayAhead(13), '09:00', 60, s.zone));
    await settle(context);
    const row = await context.database.db.selectFrom('externalEventWrites').selectAll().where('appointmentId', '=', booked.id).executeTakeFirstOrThrow();
    assert.equal(row.done, false);
    assert.match(row.lastError!, /429/);
    assert.ok(row.nextAttemptAt.getTime() >= Date.now() + 290_000, 'waits for Retry-After');
    await context.database.db.updateTable('externalEventWrites').set({ nextAttemptAt: new Date() }).where('appointmentId', '=', booked.id).execute();
    await settle(context);
    const mine = google.events(google.primaryCalendarId).filter((e) => e.extendedProperties?.private?.slotwiseAppointmentId === booked.id);
    assert.equal(mine.length, 1);
  });

  test('a provider that hangs costs the request its deadline: 503, and the app answers other calls', async () => {
    const { s } = await connectedAndSelected();
    google.hangNext({ ms: 5000, pathIncludes: '/events' });
    const response = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/sync`, headers: s.headers });
    assert.equal(response.statusCode, 503, response.body);
    const health = await context.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(health.statusCode, 200);
  });

  test('a create whose answer was lost, then a cancel: the event is still deleted', async () => {
    const { s, connectionId } = await connectedAndSelected();
    await settle(context);
    const booked = await create(s, slot(dayAhead(17), '11:00', 60, s.zone));
    await context.app.dispatcher.drain();
    // The worker's create reached Google, and its answer was lost: no event id is recorded.
    const connection = await connectionOf(connectionId);
    const session = await context.app.externalCalendars.sessions.open(connection);
    await session.putEvent(google.primaryCalendarId, null, { appointmentId: booked.id, title: 'x', description: '', start: new Date(booked.startTime), end: new Date(booked.endTime), timeZone: s.zone });
    const cancelled = await context.app.inject({ method: 'PUT', url: `/v3/appointment/${booked.id}/cancel`, headers: s.headers });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    await settle(context);
    const live = google.events(google.primaryCalendarId).filter((e) => e.extendedProperties?.private?.slotwiseAppointmentId === booked.id && e.status !== 'cancelled');
    assert.deepEqual(live, []);
  });

  test('a crash between the provider write and its record writes the event once', async () => {
    const { s, connectionId } = await connectedAndSelected();
    const booked = await create(s, slot(dayAhead(14), '11:00', 60, s.zone));
    // The dispatcher recorded the wish; then the worker wrote the event and crashed before
    // recording the provider's id: the write is made here, and the row left as it was.
    await context.app.dispatcher.drain();
    const connection = await connectionOf(connectionId);
    const session = await context.app.externalCalendars.sessions.open(connection);
    await session.putEvent(google.primaryCalendarId, null, { appointmentId: booked.id, title: 'x', description: '', start: new Date(booked.startTime), end: new Date(booked.endTime), timeZone: s.zone });
    await settle(context);
    const mine = google.events(google.primaryCalendarId).filter((e) => e.extendedProperties?.private?.slotwiseAppointmentId === booked.id);
    assert.equal(mine.length, 1, 'one event, not two');
    const row = await context.database.db.selectFrom('externalEventWrites').selectAll().where('appointmentId', '=', booked.id).executeTakeFirstOrThrow();
    assert.equal(row.done, true);
    assert.equal(row.providerEventId, mine[0]!.id);
  });
});

/** The connection's stored credentials with the access token's expiry moved into the past. */
async function expiring(connectionId: string): Promise<string> {
  const row = await context.database.db.selectFrom('externalCalendarConnections').selectAll().where('id', '=', connectionId).executeTakeFirstOrThrow();
  const sessions = context.app.externalCalendars.sessions;
  const stored = sessions.credentialsOf(row);
  return sessions.seal({ ...stored, ...(stored.kind === 'oauth' ? { expiresAt: Date.now() - 1000 } : {}) });
}

describe('holds and bookings', () => {
  test('exclude external busy time unless ignoreExternalEvents, chosen at hold or by the service', async () => {
    const s = await calendarSetup(context);
    await connectWithSelection(s, harnessFor(google));
    const selected = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/select`, headers: s.headers, payload: { calendarIds: [google.primaryCalendarId] } });
    assert.equal(selected.statusCode, 200, selected.body);
    const date = dayAhead(16);
    const start = DateTime.fromISO(`${date}T10:00`, { zone: s.zone });
    google.addEvent(google.primaryCalendarId, { summary: 'Dentist', start: { dateTime: start.toISO()! }, end: { dateTime: start.plus({ hours: 1 }).toISO()! } });
    // The account's calendar holds earlier tests' events too: this connection's first read takes them all.
    assert.ok((await syncNow(s)).imported >= 1);
    const url = `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
    const body = { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(date, '10:00', 60, s.zone) };
    const refused = await context.app.inject({ method: 'POST', url, headers: s.headers, payload: body });
    assert.equal(refused.statusCode, 400, refused.body);
    const heldUrl = `/v3/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
    assert.equal((await context.app.inject({ method: 'POST', url: heldUrl, headers: s.headers, payload: body })).statusCode, 400, 'a hold too');
    const ignoring = await context.app.inject({ method: 'POST', url: heldUrl, headers: s.headers, payload: { ...body, ignoreExternalEvents: true } });
    assert.equal(ignoring.statusCode, 201, ignoring.body);
    assert.equal(json(ignoring).ignoreExternalEvents, true);
  });
});

describe('one calendar, two companies', () => {
  test('a booking one company writes into a shared calendar is busy time for the other', async () => {
    const first = await calendarSetup(context);
    const second = await calendarSetup(context);
    for (const s of [first, second]) {
      await connectWithSelection(s, harnessFor(google));
      const selected = await context.app.inject({
        method: 'POST',
        url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/select`,
        headers: s.headers,
        payload: { calendarIds: [google.primaryCalendarId], writeCalendarId: google.primaryCalendarId },
      });
      assert.equal(selected.statusCode, 200, selected.body);
    }
    await settle(context);
    const date = dayAhead(15);
    const booked = await create(first, slot(date, '10:00', 60, first.zone));
    await settle(context);
    assert.equal((await syncNow(first)).imported, 0, 'its own booking is not busy time twice');
    const counts = await syncNow(second);
    assert.equal(counts.imported, 1, JSON.stringify(counts));
    const rows = await externalRows(second, date);
    assert.deepEqual(rows.map((r) => Date.parse(r.start_time as string)), [Date.parse(booked.startTime)]);
  });
});

describe('tenancy', () => {
  test('another company\'s resource or connection is 404 on every route', async () => {
    const owner = await calendarSetup(context);
    const { connectionId } = await connectWithSelection(owner, harnessFor(google));
    const stranger = await calendarSetup(context);
    const resourceId = owner.resourceIds[0]!;
    const calls = [
      { method: 'POST', url: `/v3/resource/${resourceId}/externalCalendar`, payload: { provider: 'google', redirectUrl: 'https://app.calendar-test.example/' } },
      { method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars` },
      { method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars/list` },
      { method: 'POST', url: `/v3/resource/${resourceId}/externalCalendars/select`, payload: { calendarIds: [] } },
      { method: 'POST', url: `/v3/resource/${resourceId}/externalCalendars/sync` },
      { method: 'DELETE', url: `/v3/resource/${resourceId}/externalCalendar/${connectionId}` },
      // Its own resource with the other company's connection id.
      { method: 'DELETE', url: `/v3/resource/${stranger.resourceIds[0]}/externalCalendar/${connectionId}` },
    ] as const;
    for (const call of calls) {
      const response = await context.app.inject({ ...call, headers: stranger.headers });
      assert.equal(response.statusCode, 404, `${call.method} ${call.url}: ${response.body}`);
    }
    const still = await context.app.inject({ method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars`, headers: owner.headers });
    assert.equal(json(still).data.length, 1, 'untouched');
    // Intervals are read per company: the stranger's calendar of the owner's resource is a 400 (a foreign id in the query).
    const calendar = await context.app.inject({ method: 'GET', url: `/v3/unavailability?ResourceIds=${resourceId}&startDate=${dayAhead(10)}`, headers: stranger.headers });
    assert.equal(calendar.statusCode, 400);
  });

  test('deleting a resource disconnects its calendars and revokes the grant at Google', async () => {
    const s = await calendarSetup(context);
    const { connectionId } = await connectWithSelection(s, harnessFor(google));
    const revokesBefore = google.requests.filter((r) => r.path.endsWith('/revoke')).length;
    const deleted = await context.app.inject({ method: 'DELETE', url: `/v3/resource/${s.resourceIds[0]}`, headers: s.headers });
    assert.ok(deleted.statusCode === 200 || deleted.statusCode === 204, deleted.body);
    const left = await context.database.db.selectFrom('externalCalendarConnections').select('id').where('id', '=', connectionId).execute();
    assert.deepEqual(left, []);
    assert.equal(google.requests.filter((r) => r.path.endsWith('/revoke')).length, revokesBefore + 1);
  });
});
