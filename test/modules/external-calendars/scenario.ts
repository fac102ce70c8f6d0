// The end-to-end story every provider must pass (issue: "an end-to-end test per provider"), written
// once over a small harness per provider (google-e2e, microsoft-e2e, caldav-e2e test files), each
// against its local stand-in or real server:
// connect (OAuth dance or CalDAV credentials), selection token, list, select; a busy event removes
// exactly its slots while free and declined ones do not; edits and deletes at the provider show
// after a sync; booking writes an event from the template, reschedule moves it, cancel removes
// it; disconnect removes the intervals.
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { create, dayAhead, freeTimes, operate, setup, slot } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';
import { saveTemplate, updateCompany } from '../notifications/helpers.js';

export const REDIRECT_HOST = 'app.calendar-test.example';
export const REDIRECT_URL = `https://${REDIRECT_HOST}/calendar/done?from=settings`;
/** The callback's origin the app is configured with (PUBLIC_BASE_URL); requests go through inject. */
export const PUBLIC_BASE_URL = 'http://127.0.0.1:9';

/** An event as the provider stores what we wrote. */
export interface WrittenEvent {
  id: string;
  title: string;
  description: string;
  start: Date;
  end: Date;
}

export interface ProviderHarness {
  provider: 'google' | 'microsoft' | 'caldav';
  /** Calendars the account has: the one read and written in the story. */
  calendarId: string;
  /** Adds an event at the provider; `kind` says how the provider marks free and declined events. */
  addEvent(calendarId: string, event: { start: Date; end: Date; kind: 'busy' | 'free' | 'declined'; title?: string }): Promise<string>;
  moveEvent(calendarId: string, eventId: string, start: Date, end: Date): Promise<void>;
  removeEvent(calendarId: string, eventId: string): Promise<void>;
  /** The events in the calendar that Slotwise wrote (live ones only). */
  writtenEvents(calendarId: string): Promise<WrittenEvent[]>;
}

export interface Connected {
  connectionId: string;
  /** A Calendar Selection Token (OAuth providers); null for CalDAV, which has no callback. */
  selectionToken: string | null;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A tenant whose company allows the redirect host, with a bookable resource open 09:00-17:00 London. */
export async function calendarSetup(context: TestContext): Promise<Setup> {
  const s = await setup(context);
  await updateCompany(s, { allowedDomains: [REDIRECT_HOST] });
  return s;
}

/**
 * The OAuth dance as a browser makes it: POST the connection, open the authUrl at the stand-in
 * (which consents at once and redirects to our callback), follow that into the app, and read
 * where the app sends the browser.
 */
export async function oauthDance(s: Setup, provider: 'google' | 'microsoft', options: { selection?: boolean } = {}) {
  const resourceId = s.resourceIds[0]!;
  const created = await s.context.app.inject({
    method: 'POST',
    url: `/v3/resource/${resourceId}/externalCalendar`,
    headers: s.headers,
    payload: { provider, redirectUrl: REDIRECT_URL, useOnSchedCalendarSelection: options.selection ?? true },
  });
  assert.equal(created.statusCode, 201, created.body);
  const connection = json<{ id: string; provider: string; status: string; authUrl: string }>(created);
  assert.equal(connection.status, 'pending');
  const consent = await fetch(connection.authUrl, { redirect: 'manual' });
  assert.equal(consent.status, 302);
  const callback = new URL(consent.headers.get('location')!);
  assert.equal(callback.origin + callback.pathname, `${PUBLIC_BASE_URL}/v3/calendar/callback`);
  const back = await s.context.app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` });
  assert.equal(back.statusCode, 302, back.body);
  const location = new URL(back.headers.location as string);
  return { connection, callbackPath: `${callback.pathname}${callback.search}`, location };
}

/** Connects and, for OAuth providers, exchanges the callback's code for a Calendar Selection Token. */
export async function connectWithSelection(s: Setup, harness: ProviderHarness, caldav?: Record<string, string>): Promise<Connected> {
  if (harness.provider === 'caldav') {
    const response = await s.context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`, headers: s.headers, payload: { provider: 'caldav', ...caldav } });
    assert.equal(response.statusCode, 201, response.body);
    const body = json(response);
    assert.equal(body.status, 'connected');
    assert.equal(body.authUrl, undefined);
    return { connectionId: body.id, selectionToken: null };
  }
  const { connection, location } = await oauthDance(s, harness.provider);
  assert.equal(location.origin + location.pathname, `https://${REDIRECT_HOST}/calendar/done`);
  assert.equal(location.searchParams.get('from'), 'settings', 'the redirectUrl keeps its own query');
  assert.equal(location.searchParams.get('connectionId'), connection.id);
  const code = location.searchParams.get('code');
  assert.ok(code, 'a one-time selection code');
  const session = await s.context.app.inject({ method: 'POST', url: '/v3/calendar/selectionSession', payload: { code } });
  assert.equal(session.statusCode, 200, session.body);
  const answer = json(session);
  assert.equal(answer.tokenType, 'Bearer');
  assert.equal(answer.expiresIn, 900);
  assert.equal(answer.connectionId, connection.id);
  assert.equal(answer.resourceId, s.resourceIds[0]);
  return { connectionId: connection.id, selectionToken: answer.token };
}

/** Runs the outbox dispatcher and the calendar worker until both are idle. */
export async function settle(context: TestContext): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const events = await context.app.dispatcher.drain();
    const calendar = await context.app.externalCalendars.worker.drain();
    if (events === 0 && calendar === 0) return;
  }
}

export async function syncNow(s: Setup) {
  const response = await s.context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/sync`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ imported: number; updated: number; removed: number }>(response);
}

export async function externalRows(s: Setup, date: string) {
  const response = await s.context.app.inject({ method: 'GET', url: `/v3/unavailability?ResourceIds=${s.resourceIds[0]}&startDate=${date}`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: Array<Record<string, unknown>> }>(response).data.filter((row) => row.external_busy !== null);
}

const at = (date: string, time: string, zone: string) => DateTime.fromISO(`${date}T${time}`, { zone }).toJSDate();
const hours = (from: number, to: number, except: string[] = []) =>
  Array.from({ length: to - from }, (_, i) => `${String(from + i).padStart(2, '0')}:00`).filter((t) => !except.includes(t));

/** The whole story; `caldav` gives the CalDAV credentials. */
export async function runProviderStory(context: TestContext, harness: ProviderHarness, caldav?: Record<string, string>): Promise<void> {
  const s = await calendarSetup(context);
  const resourceId = s.resourceIds[0]!;
  const date = dayAhead(10);
  const zone = s.zone;
  const { connectionId, selectionToken } = await connectWithSelection(s, harness, caldav);
  const listHeaders = selectionToken ? bearer(selectionToken) : s.headers;

  // List (the provider inferred: only one is connected) and select, with the selection token where there is one.
  const listed = await context.app.inject({ method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars/list`, headers: listHeaders });
  assert.equal(listed.statusCode, 200, listed.body);
  const calendars = json<{ data: Array<{ id: string; selected: boolean; canWrite: boolean }> }>(listed).data;
  const calendar = calendars.find((c) => c.id === harness.calendarId);
  assert.ok(calendar, `the calendar ${harness.calendarId} is listed: ${listed.body}`);
  assert.equal(calendar.selected, false);
  assert.equal(calendar.canWrite, true);
  const unknown = await context.app.inject({ method: 'POST', url: `/v3/resource/${resourceId}/externalCalendars/select`, headers: listHeaders, payload: { calendarIds: ['no-such-calendar'] } });
  assert.equal(unknown.statusCode, 400);
  assert.match(unknown.body, /no-such-calendar/);
  const selected = await context.app.inject({
    method: 'POST',
    url: `/v3/resource/${resourceId}/externalCalendars/select`,
    headers: listHeaders,
    payload: { calendarIds: [harness.calendarId], writeCalendarId: harness.calendarId },
  });
  assert.equal(selected.statusCode, 200, selected.body);
  assert.deepEqual(json(selected).data.find((c: { id: string }) => c.id === harness.calendarId), { ...calendar, selected: true, write: true });

  // A busy event takes exactly its slot; a free one and a declined one take nothing.
  assert.deepEqual(await freeTimes(s, date), hours(9, 17));
  const busyId = await harness.addEvent(harness.calendarId, { start: at(date, '10:00', zone), end: at(date, '11:00', zone), kind: 'busy', title: 'Dentist' });
  await harness.addEvent(harness.calendarId, { start: at(date, '12:00', zone), end: at(date, '13:00', zone), kind: 'free' });
  await harness.addEvent(harness.calendarId, { start: at(date, '14:00', zone), end: at(date, '15:00', zone), kind: 'declined' });
  assert.equal((await syncNow(s)).imported, 1);
  const rows = await externalRows(s, date);
  assert.equal(rows.length, 1, JSON.stringify(rows));
  assert.equal(rows[0]!.source, 'block');
  assert.equal(rows[0]!.entity_type, 'resource');
  assert.equal(rows[0]!.entity_id, resourceId);
  assert.equal(rows[0]!.external_busy, true);
  assert.equal(Date.parse(rows[0]!.start_time as string), at(date, '10:00', zone).getTime());
  assert.equal(Date.parse(rows[0]!.end_time as string), at(date, '11:00', zone).getTime());
  assert.deepEqual(await freeTimes(s, date), hours(9, 17, ['10:00']));

  // Edited at the provider: the slot moves after a sync; deleted: it is free again.
  await harness.moveEvent(harness.calendarId, busyId, at(date, '11:00', zone), at(date, '12:00', zone));
  assert.deepEqual(await syncNow(s), { imported: 0, updated: 1, removed: 0 });
  assert.deepEqual(await freeTimes(s, date), hours(9, 17, ['11:00']));
  await harness.removeEvent(harness.calendarId, busyId);
  assert.deepEqual(await syncNow(s), { imported: 0, updated: 0, removed: 1 });
  assert.deepEqual(await freeTimes(s, date), hours(9, 17));

  // Booking writes an event titled by the template; it is never read back as busy time.
  await saveTemplate(s, { type: 'EXTERNAL_CALENDAR_EVENT', recipientType: 'RESOURCE', channel: 'EMAIL', subject: 'Booked: {{service.name}}', body: 'With {{customer.firstName}}' });
  const booked = await create(s, slot(date, '13:00', 60, zone));
  assert.equal(booked.status, 'BK');
  await settle(context);
  let written = await harness.writtenEvents(harness.calendarId);
  assert.equal(written.length, 1, JSON.stringify(written));
  assert.equal(written[0]!.title, 'Booked: Consult');
  assert.match(written[0]!.description, /With /);
  assert.equal(written[0]!.start.getTime(), Date.parse(booked.startTime));
  assert.equal(written[0]!.end.getTime(), Date.parse(booked.endTime));
  const eventId = written[0]!.id;
  assert.equal((await syncNow(s)).imported, 0, 'our own event is not busy time');
  assert.equal((await externalRows(s, date)).length, 0);

  // Reschedule moves the same event; cancel removes it.
  const moved = await operate(s, booked.id, 'reschedule', slot(date, '15:00', 60, zone));
  assert.equal(moved.statusCode, 200, moved.body);
  const replacement = json(moved);
  await settle(context);
  written = await harness.writtenEvents(harness.calendarId);
  assert.equal(written.length, 1, JSON.stringify(written));
  assert.equal(written[0]!.id, eventId, 'the same provider event, moved');
  assert.equal(written[0]!.start.getTime(), Date.parse(replacement.startTime));
  const cancelled = await operate(s, replacement.id, 'cancel');
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  await settle(context);
  assert.deepEqual(await harness.writtenEvents(harness.calendarId), []);

  // Disconnect (with the selection token where there is one): the intervals go with it.
  await harness.addEvent(harness.calendarId, { start: at(date, '16:00', zone), end: at(date, '17:00', zone), kind: 'busy' });
  assert.equal((await syncNow(s)).imported, 1);
  assert.deepEqual(await freeTimes(s, date), hours(9, 17, ['16:00']));
  const gone = await context.app.inject({ method: 'DELETE', url: `/v3/resource/${resourceId}/externalCalendar/${connectionId}`, headers: listHeaders });
  assert.equal(gone.statusCode, 204, gone.body);
  assert.equal((await externalRows(s, date)).length, 0);
  assert.deepEqual(await freeTimes(s, date), hours(9, 17));
  const connections = await context.app.inject({ method: 'GET', url: `/v3/resource/${resourceId}/externalCalendars`, headers: s.headers });
  assert.deepEqual(json(connections).data, []);
}
