import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import { GOOGLE_APPOINTMENT_PROPERTY, GOOGLE_SCOPES, createGoogleProvider, googleEventId } from '../../../src/modules/external-calendars/providers/google.js';
import { parseRetryAfter } from '../../../src/platform/outbound/retry-after.js';
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from '../../../src/modules/external-calendars/providers/types.js';
import type { CalendarSession, OAuthCalendarProvider, OAuthTokens, SyncResult, SyncWindow } from '../../../src/modules/external-calendars/providers/types.js';
import { startGoogleStandIn } from '../../helpers/google-stand-in.js';
import type { GoogleCalendarInit, GoogleStandIn } from '../../helpers/google-stand-in.js';

// The Google provider against a local stand-in of Google's OAuth endpoints and Calendar API
// (test/helpers/google-stand-in.ts), through the real OutboundFetch with loopback http allowed.

const REDIRECT_URI = 'https://app.slotwise.test/v3/calendar/callback';
const BERLIN = 'Europe/Berlin';
/** March and April 2024: Berlin moves its clocks on 31 March, New York on 10 March. */
const WINDOW: SyncWindow = { from: new Date('2024-03-01T00:00:00Z'), to: new Date('2024-05-01T00:00:00Z'), zone: BERLIN };

let google: GoogleStandIn;
let provider: OAuthCalendarProvider;
let tokens: OAuthTokens;
let session: CalendarSession;

function makeProvider(options: { timeoutMs?: number; allowLoopbackHttp?: boolean } = {}): OAuthCalendarProvider {
  const fetch = createOutboundFetch({ timeoutMs: options.timeoutMs ?? 10_000, allowLoopbackHttp: options.allowLoopbackHttp ?? true });
  return createGoogleProvider({ clientId: google.clientId, clientSecret: google.clientSecret, ...google.urls }, { fetch });
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The browser's part: open the consent URL and read where Google sends the user back. */
async function consent(authUrl: string): Promise<URL> {
  const response = await fetch(authUrl, { redirect: 'manual' });
  assert.equal(response.status, 302);
  return new URL(response.headers.get('location') ?? '');
}

async function connect(): Promise<OAuthTokens> {
  const { verifier, challenge } = pkce();
  const back = await consent(provider.authorizationUrl({ state: 'state-1', codeChallenge: challenge, redirectUri: REDIRECT_URI }));
  return provider.exchangeCode({ code: back.searchParams.get('code') ?? '', codeVerifier: verifier, redirectUri: REDIRECT_URI });
}

let calendarCount = 0;
function newCalendar(init: Partial<GoogleCalendarInit> = {}): string {
  calendarCount += 1;
  const id = init.id ?? `cal${calendarCount}@group.calendar.google.com`;
  google.addCalendar({ timeZone: BERLIN, ...init, id });
  return id;
}

const timed = (start: string, end: string) => ({ start: { dateTime: start, timeZone: BERLIN }, end: { dateTime: end, timeZone: BERLIN } });
const keys = (result: SyncResult) => result.events.map((event) => event.key).sort();
const busyOf = (result: SyncResult, key: string) => result.events.find((event) => event.key === key);

before(async () => {
  google = await startGoogleStandIn({ timeZone: BERLIN });
  provider = makeProvider();
  tokens = await connect();
  session = provider.session(tokens.accessToken);
});
after(() => google.close());

describe('OAuth', () => {
  test('the consent URL carries Google’s parameters', () => {
    const url = new URL(provider.authorizationUrl({ state: 's t', codeChallenge: 'abc', redirectUri: REDIRECT_URI }));
    assert.equal(url.origin + url.pathname, google.urls.authUrl);
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      response_type: 'code',
      client_id: google.clientId,
      redirect_uri: REDIRECT_URI,
      scope: GOOGLE_SCOPES.join(' '),
      state: 's t',
      code_challenge: 'abc',
      code_challenge_method: 'S256',
      access_type: 'offline',
      prompt: 'consent',
      include_granted_scopes: 'true',
    });
  });

  test('the PKCE dance: consent, code back with the state, exchange with the verifier', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(provider.authorizationUrl({ state: 'state-42', codeChallenge: challenge, redirectUri: REDIRECT_URI }));
    assert.equal(back.origin + back.pathname, REDIRECT_URI);
    assert.equal(back.searchParams.get('state'), 'state-42');
    const before = Date.now();
    const result = await provider.exchangeCode({ code: back.searchParams.get('code') ?? '', codeVerifier: verifier, redirectUri: REDIRECT_URI });
    assert.match(result.accessToken, /^ya29\./);
    assert.match(result.refreshToken ?? '', /^1\/\//);
    assert.ok(result.expiresAt >= before + 3_598_000 && result.expiresAt <= Date.now() + 3_599_000, String(result.expiresAt));
    const exchange = google.requests.filter((r) => r.path === '/token').at(-1);
    const form = new URLSearchParams(exchange?.body);
    assert.equal(form.get('grant_type'), 'authorization_code');
    assert.equal(form.get('code_verifier'), verifier);
    assert.equal(form.get('client_secret'), google.clientSecret);
    // The code was spent.
    await assert.rejects(provider.exchangeCode({ code: back.searchParams.get('code') ?? '', codeVerifier: verifier, redirectUri: REDIRECT_URI }), GrantRevokedError);
  });

  test('a wrong verifier is refused (invalid_grant)', async () => {
    const { challenge } = pkce();
    const back = await consent(provider.authorizationUrl({ state: 's', codeChallenge: challenge, redirectUri: REDIRECT_URI }));
    await assert.rejects(
      provider.exchangeCode({ code: back.searchParams.get('code') ?? '', codeVerifier: pkce().verifier, redirectUri: REDIRECT_URI }),
      (error: unknown) => error instanceof GrantRevokedError && /invalid_grant/.test(error.message),
    );
  });

  test('a denied consent comes back as error=access_denied with the state', async () => {
    google.consent = 'deny';
    try {
      const back = await consent(provider.authorizationUrl({ state: 'st', codeChallenge: pkce().challenge, redirectUri: REDIRECT_URI }));
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), 'st');
      assert.equal(back.searchParams.get('code'), null);
    } finally {
      google.consent = 'grant';
    }
  });

  test('an ID token from an earlier openid grant (include_granted_scopes) is no obstacle', async () => {
    google.previouslyGrantedScopes = ['openid', 'email'];
    try {
      const own = await connect();
      const exchange = google.requests.filter((r) => r.path === '/token').at(-1);
      assert.equal(new URLSearchParams(exchange?.body).get('grant_type'), 'authorization_code');
      assert.ok(own.refreshToken);
      const refreshed = await provider.refresh(own.refreshToken ?? '');
      assert.ok((await provider.session(refreshed.accessToken).listCalendars()).length > 0);
    } finally {
      google.previouslyGrantedScopes = [];
    }
  });

  test('a wrong client secret is a ProviderError, not a revoked grant', async () => {
    const fetch = createOutboundFetch({ timeoutMs: 10_000, allowLoopbackHttp: true });
    const wrong = createGoogleProvider({ clientId: google.clientId, clientSecret: 'nope', ...google.urls }, { fetch });
    await assert.rejects(wrong.refresh(tokens.refreshToken ?? ''), (error: unknown) => error instanceof ProviderError && error.status === 401);
  });

  test('refresh gives a working access token and keeps the refresh token (null)', async () => {
    const own = await connect();
    const refreshed = await provider.refresh(own.refreshToken ?? '');
    assert.notEqual(refreshed.accessToken, own.accessToken);
    assert.equal(refreshed.refreshToken, null);
    assert.ok(refreshed.expiresAt > Date.now());
    const calendars = await provider.session(refreshed.accessToken).listCalendars();
    assert.ok(calendars.some((c) => c.primary));
  });

  test('a revoked grant: refresh and API calls throw GrantRevokedError', async () => {
    const own = await connect();
    google.revokeGrant(own.refreshToken ?? '');
    await assert.rejects(provider.refresh(own.refreshToken ?? ''), GrantRevokedError);
    await assert.rejects(provider.session(own.accessToken).listCalendars(), GrantRevokedError);
    await assert.rejects(provider.session('ya29.unknown').listCalendars(), GrantRevokedError);
  });

  test('revoke ends the grant at Google; revoking again is fine', async () => {
    const own = await connect();
    await provider.revoke(own.refreshToken ?? '');
    const revocation = google.requests.filter((r) => r.path === '/revoke').at(-1);
    assert.equal(new URLSearchParams(revocation?.body).get('token'), own.refreshToken);
    await assert.rejects(provider.refresh(own.refreshToken ?? ''), GrantRevokedError);
    await assert.rejects(provider.session(own.accessToken).listCalendars(), GrantRevokedError);
    await provider.revoke(own.refreshToken ?? '');
  });

  test('429 and 5xx from the token endpoint are ProviderErrors with Retry-After', async () => {
    google.failNext({ status: 429, retryAfterSeconds: 12, pathIncludes: '/token' });
    await assert.rejects(provider.refresh(tokens.refreshToken ?? ''), (error: unknown) => error instanceof ProviderError && error.status === 429 && error.retryAfterMs === 12_000);
    google.failNext({ status: 503, pathIncludes: '/token' });
    await assert.rejects(provider.refresh(tokens.refreshToken ?? ''), (error: unknown) => error instanceof ProviderError && error.status === 503 && error.retryAfterMs === null);
  });
});

describe('calendar list', () => {
  test('every page, with primary and write access by role', async () => {
    const reader = newCalendar({ summary: 'Holidays', accessRole: 'reader' });
    const writer = newCalendar({ summary: 'Team', accessRole: 'writer' });
    const freeBusy = newCalendar({ summary: 'Room', accessRole: 'freeBusyReader' });
    google.maxPageSize = 2;
    let calendars;
    try {
      calendars = await session.listCalendars();
    } finally {
      google.maxPageSize = null;
    }
    assert.ok(google.requests.some((r) => r.path.endsWith('/users/me/calendarList') && r.query.has('pageToken')), 'more than one page');
    const byId = new Map(calendars.map((c) => [c.id, c]));
    assert.deepEqual(byId.get(google.primaryCalendarId), { id: google.primaryCalendarId, name: google.primaryCalendarId, primary: true, canWrite: true });
    assert.deepEqual(byId.get(reader), { id: reader, name: 'Holidays', primary: false, canWrite: false });
    assert.deepEqual(byId.get(writer), { id: writer, name: 'Team', primary: false, canWrite: true });
    assert.deepEqual(byId.get(freeBusy), { id: freeBusy, name: 'Room', primary: false, canWrite: false });
  });
});

describe('sync', () => {
  test('a full sync, then incremental syncs that carry additions, edits and deletions', async () => {
    const calendar = newCalendar();
    const a = google.addEvent(calendar, { summary: 'A', ...timed('2024-03-04T09:00:00+01:00', '2024-03-04T10:00:00+01:00') });
    const b = google.addEvent(calendar, { summary: 'B', ...timed('2024-03-05T09:00:00+01:00', '2024-03-05T11:00:00+01:00') });
    google.addEvent(calendar, { summary: 'before the window', ...timed('2024-02-01T09:00:00+01:00', '2024-02-01T10:00:00+01:00') });

    const full = await session.syncCalendar(calendar, null, WINDOW);
    assert.equal(full.full, true);
    assert.deepEqual(keys(full), [a, b].sort());
    assert.deepEqual(busyOf(full, a), { key: a, start: new Date('2024-03-04T08:00:00Z'), end: new Date('2024-03-04T09:00:00Z'), transparency: 'opaque', eventType: 'default' });
    assert.ok(full.cursor);
    const fullRequest = google.requests.filter((r) => r.path.endsWith('/events')).at(-1);
    assert.equal(fullRequest?.query.get('timeMin'), WINDOW.from.toISOString());
    assert.equal(fullRequest?.query.get('timeMax'), WINDOW.to.toISOString());
    assert.equal(fullRequest?.query.get('singleEvents'), 'true');
    assert.equal(fullRequest?.query.get('showDeleted'), 'true');
    assert.equal(fullRequest?.query.get('maxResults'), '2500');

    const quiet = await session.syncCalendar(calendar, full.cursor, WINDOW);
    assert.deepEqual(quiet, { full: false, events: [], removed: [], cursor: quiet.cursor });
    const incrementalRequest = google.requests.filter((r) => r.path.endsWith('/events')).at(-1);
    assert.equal(incrementalRequest?.query.get('syncToken'), JSON.parse(full.cursor).syncToken);
    assert.equal(incrementalRequest?.query.has('timeMin'), false);
    assert.equal(incrementalRequest?.query.has('timeMax'), false);

    const c = google.addEvent(calendar, { summary: 'C', ...timed('2024-04-10T14:00:00+02:00', '2024-04-10T15:30:00+02:00') });
    google.updateEvent(calendar, a, timed('2024-03-04T12:00:00+01:00', '2024-03-04T13:00:00+01:00'));
    google.deleteEvent(calendar, b);
    const moved = google.addEvent(calendar, { summary: 'D', ...timed('2024-03-06T09:00:00+01:00', '2024-03-06T10:00:00+01:00') });
    const next = await session.syncCalendar(calendar, quiet.cursor, WINDOW);
    assert.equal(next.full, false);
    assert.deepEqual(keys(next), [a, c, moved].sort());
    assert.deepEqual(busyOf(next, a)?.start, new Date('2024-03-04T11:00:00Z'));
    assert.deepEqual(busyOf(next, c)?.end, new Date('2024-04-10T13:30:00Z'));
    assert.deepEqual(next.removed, [b]);

    // Moved out of the window: no longer busy there.
    google.updateEvent(calendar, moved, timed('2024-06-06T09:00:00+02:00', '2024-06-06T10:00:00+02:00'));
    const later = await session.syncCalendar(calendar, next.cursor, WINDOW);
    assert.deepEqual(later.events, []);
    assert.deepEqual(later.removed, [moved]);
  });

  test('free, cancelled, declined and working-location events are never busy; events Slotwise wrote are, with their marker', async () => {
    const calendar = newCalendar();
    const slot = timed('2024-03-11T09:00:00+01:00', '2024-03-11T10:00:00+01:00');
    const busy = google.addEvent(calendar, { summary: 'busy', ...slot });
    const tentative = google.addEvent(calendar, { summary: 'maybe', status: 'tentative', ...slot });
    const accepted = google.addEvent(calendar, {
      summary: 'accepted',
      ...slot,
      attendees: [
        { email: 'boss@example.com', organizer: true, responseStatus: 'accepted' },
        { email: 'user@example.com', self: true, responseStatus: 'accepted' },
      ],
    });
    const ooo = google.addEvent(calendar, { summary: 'away', eventType: 'outOfOffice', ...slot });
    const free = google.addEvent(calendar, { summary: 'free', transparency: 'transparent', ...slot });
    const declined = google.addEvent(calendar, {
      summary: 'declined',
      ...slot,
      attendees: [
        { email: 'boss@example.com', organizer: true, responseStatus: 'accepted' },
        { email: 'user@example.com', self: true, responseStatus: 'declined' },
      ],
    });
    const othersDeclined = google.addEvent(calendar, {
      summary: 'someone else declined',
      ...slot,
      attendees: [{ email: 'other@example.com', responseStatus: 'declined' }],
    });
    // Written by Slotwise, by this company or another: busy, with the appointment id; free stays free.
    const oursId = randomUUID();
    const ours = google.addEvent(calendar, { summary: 'ours', ...slot, extendedProperties: { private: { [GOOGLE_APPOINTMENT_PROPERTY]: oursId } } });
    const oursFree = google.addEvent(calendar, { summary: 'ours, free', transparency: 'transparent', ...slot, extendedProperties: { private: { [GOOGLE_APPOINTMENT_PROPERTY]: randomUUID() } } });
    const working = google.addEvent(calendar, { summary: 'home', eventType: 'workingLocation', transparency: 'transparent', ...slot });
    const cancelled = google.addEvent(calendar, { summary: 'cancelled', ...slot });
    google.deleteEvent(calendar, cancelled);

    const full = await session.syncCalendar(calendar, null, WINDOW);
    assert.deepEqual(keys(full), [busy, tentative, accepted, ooo, othersDeclined, ours].sort());
    assert.equal(busyOf(full, ooo)?.eventType, 'outOfOffice');
    assert.equal(busyOf(full, ours)?.marker, oursId);
    assert.equal(busyOf(full, busy)?.marker, undefined);
    assert.deepEqual(full.removed.sort(), [free, declined, oursFree, working, cancelled].sort());

    // Made free, declined or cancelled later: removed in the next incremental sync.
    google.updateEvent(calendar, busy, { transparency: 'transparent' });
    google.updateEvent(calendar, accepted, {
      attendees: [
        { email: 'boss@example.com', organizer: true, responseStatus: 'accepted' },
        { email: 'user@example.com', self: true, responseStatus: 'declined' },
      ],
    });
    google.updateEvent(calendar, tentative, { status: 'cancelled' });
    const next = await session.syncCalendar(calendar, full.cursor, WINDOW);
    assert.deepEqual(next.events, []);
    assert.deepEqual(next.removed.sort(), [busy, accepted, tentative].sort());
  });

  test('recurring events arrive as their occurrences, each at its wall-clock time across DST', async () => {
    const calendar = newCalendar();
    // Tuesdays and Thursdays at 09:00 Berlin, six times: 26 March is CET (+01:00), 2 April CEST (+02:00).
    const weekly = google.addEvent(calendar, {
      summary: 'standup',
      ...timed('2024-03-26T09:00:00+01:00', '2024-03-26T09:30:00+01:00'),
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6;BYDAY=TU,TH'],
    });
    // Daily 08:00 Berlin until 1 April (inclusive), skipping 31 March.
    const daily = google.addEvent(calendar, {
      summary: 'gym',
      ...timed('2024-03-29T08:00:00+01:00', '2024-03-29T09:00:00+01:00'),
      recurrence: ['RRULE:FREQ=DAILY;UNTIL=20240401T235959Z', 'EXDATE;TZID=Europe/Berlin:20240331T080000'],
    });

    const full = await session.syncCalendar(calendar, null, WINDOW);
    const weeklyKeys = keys(full).filter((key) => key.startsWith(`${weekly}_`));
    assert.deepEqual(weeklyKeys, [
      `${weekly}_20240326T080000Z`,
      `${weekly}_20240328T080000Z`,
      `${weekly}_20240402T070000Z`,
      `${weekly}_20240404T070000Z`,
      `${weekly}_20240409T070000Z`,
      `${weekly}_20240411T070000Z`,
    ]);
    assert.deepEqual(busyOf(full, `${weekly}_20240402T070000Z`), {
      key: `${weekly}_20240402T070000Z`,
      start: new Date('2024-04-02T07:00:00Z'),
      end: new Date('2024-04-02T07:30:00Z'),
      transparency: 'opaque',
      eventType: 'default',
    });
    assert.deepEqual(
      keys(full).filter((key) => key.startsWith(`${daily}_`)),
      [`${daily}_20240329T070000Z`, `${daily}_20240330T070000Z`, `${daily}_20240401T060000Z`],
    );

    // One occurrence cancelled, one moved, then the whole daily series deleted.
    google.deleteEvent(calendar, `${weekly}_20240328T080000Z`);
    google.updateEvent(calendar, `${weekly}_20240404T070000Z`, timed('2024-04-04T15:00:00+02:00', '2024-04-04T15:30:00+02:00'));
    google.deleteEvent(calendar, daily);
    const next = await session.syncCalendar(calendar, full.cursor, WINDOW);
    assert.deepEqual(keys(next), [`${weekly}_20240404T070000Z`]);
    assert.deepEqual(busyOf(next, `${weekly}_20240404T070000Z`)?.start, new Date('2024-04-04T13:00:00Z'));
    assert.deepEqual(next.removed.sort(), [`${weekly}_20240328T080000Z`, `${daily}_20240329T070000Z`, `${daily}_20240330T070000Z`, `${daily}_20240401T060000Z`].sort());
  });

  test('all-day events cover their days midnight to midnight in the event’s, else the calendar’s, else the window’s zone', async () => {
    const berlin = newCalendar({ timeZone: BERLIN });
    // 31 March 2024 in Berlin has 23 hours.
    const dstDay = google.addEvent(berlin, { summary: 'moving day', start: { date: '2024-03-31' }, end: { date: '2024-04-01' } });
    // Its own zone wins: 9 to 11 March in New York, where 10 March has 23 hours.
    const newYork = google.addEvent(berlin, { summary: 'trip', start: { date: '2024-03-09', timeZone: 'America/New_York' }, end: { date: '2024-03-11', timeZone: 'America/New_York' } });
    const full = await session.syncCalendar(berlin, null, WINDOW);
    assert.deepEqual(busyOf(full, dstDay), { key: dstDay, start: new Date('2024-03-30T23:00:00Z'), end: new Date('2024-03-31T22:00:00Z'), transparency: 'opaque', eventType: 'default' });
    assert.equal(busyOf(full, dstDay)!.end.getTime() - busyOf(full, dstDay)!.start.getTime(), 23 * 3_600_000);
    assert.deepEqual([busyOf(full, newYork)?.start, busyOf(full, newYork)?.end], [new Date('2024-03-09T05:00:00Z'), new Date('2024-03-11T04:00:00Z')]);

    // A calendar that names no zone: the window's.
    const zoneless = newCalendar({ timeZone: null });
    const day = google.addEvent(zoneless, { summary: 'day off', start: { date: '2024-03-31' }, end: { date: '2024-04-01' } });
    const london = await session.syncCalendar(zoneless, null, { ...WINDOW, zone: 'Europe/London' });
    assert.deepEqual([busyOf(london, day)?.start, busyOf(london, day)?.end], [new Date('2024-03-31T00:00:00Z'), new Date('2024-03-31T23:00:00Z')]);
  });

  test('a refused sync token (410) is SyncCursorExpiredError; a full sync starts over', async () => {
    const calendar = newCalendar();
    const event = google.addEvent(calendar, { summary: 'x', ...timed('2024-03-04T09:00:00+01:00', '2024-03-04T10:00:00+01:00') });
    const full = await session.syncCalendar(calendar, null, WINDOW);
    google.expireSyncTokens();
    await assert.rejects(session.syncCalendar(calendar, full.cursor, WINDOW), SyncCursorExpiredError);
    const again = await session.syncCalendar(calendar, null, WINDOW);
    assert.deepEqual(keys(again), [event]);
    assert.deepEqual((await session.syncCalendar(calendar, again.cursor, WINDOW)).events, []);
  });

  test('a window the cursor does not cover is read in full, finding unchanged events in the days it grew into', async () => {
    const calendar = newCalendar();
    const day = (n: number) => new Date(Date.parse('2024-03-01T00:00:00Z') + n * 86_400_000);
    const at = (n: number) => ({ start: { dateTime: day(n).toISOString().replace('.000Z', 'Z') }, end: { dateTime: new Date(day(n).getTime() + 3_600_000).toISOString().replace('.000Z', 'Z') } });
    const early = google.addEvent(calendar, { summary: 'day 5', ...at(5) });
    const middle = google.addEvent(calendar, { summary: 'day 20', ...at(20) });
    const late = google.addEvent(calendar, { summary: 'day 40', ...at(40) });
    const first = await session.syncCalendar(calendar, null, { from: day(0), to: day(30), zone: BERLIN });
    assert.deepEqual(keys(first), [early, middle].sort());
    assert.ok(first.cursor);
    assert.deepEqual(JSON.parse(first.cursor), { syncToken: JSON.parse(first.cursor).syncToken, from: day(0).toISOString(), to: day(30).toISOString() });

    // Days 15 to 45: nothing changed in Google, yet day 40 is new to the window.
    const moved: SyncWindow = { from: day(15), to: day(45), zone: BERLIN };
    const grown = await session.syncCalendar(calendar, first.cursor, moved);
    assert.equal(grown.full, true);
    assert.deepEqual(keys(grown), [middle, late].sort(), 'the day-5 event has left the window; a full result drops it');
    assert.deepEqual(busyOf(grown, late)?.start, day(40));
    const read = google.requests.filter((r) => r.path.endsWith('/events')).at(-1);
    assert.equal(read?.query.has('syncToken'), false);
    assert.equal(read?.query.get('timeMin'), moved.from.toISOString());
    assert.equal(read?.query.get('timeMax'), moved.to.toISOString());

    // A window inside the cursor's is incremental again.
    const quiet = await session.syncCalendar(calendar, grown.cursor, { ...moved, from: day(16) });
    assert.deepEqual({ full: quiet.full, events: quiet.events }, { full: false, events: [] });

    // A cursor we cannot read (a bare sync token from before cursors carried their window) asks for a full sync.
    await assert.rejects(session.syncCalendar(calendar, JSON.parse(grown.cursor ?? '{}').syncToken, moved), SyncCursorExpiredError);
    await assert.rejects(session.syncCalendar(calendar, '{"syncToken":"x"}', moved), SyncCursorExpiredError);
  });

  test('every page of a large calendar is read; the sync token comes with the last', async () => {
    const calendar = newCalendar();
    const start = Date.parse('2024-03-02T00:00:00Z');
    for (let i = 0; i < 3_000; i += 1) {
      const from = new Date(start + i * 15 * 60_000).toISOString();
      const to = new Date(start + (i + 1) * 15 * 60_000).toISOString();
      google.addEvent(calendar, { summary: `e${i}`, start: { dateTime: from }, end: { dateTime: to } });
    }
    const before = google.requests.length;
    const full = await session.syncCalendar(calendar, null, WINDOW);
    const walk = google.requests.slice(before).filter((r) => r.path.includes(encodeURIComponent(calendar)));
    assert.equal(walk.length, 2);
    assert.equal(walk[1]?.query.has('pageToken'), true);
    assert.equal(full.events.length, 3_000);
    assert.equal(new Set(keys(full)).size, 3_000);
    assert.ok(full.cursor);

    const [first] = google.events(calendar);
    google.updateEvent(calendar, first?.id ?? '', { summary: 'renamed' });
    const next = await session.syncCalendar(calendar, full.cursor, WINDOW);
    assert.deepEqual(keys(next), [first?.id]);
  });
});

describe('errors', () => {
  test('429 with Retry-After (seconds) is a ProviderError with retryAfterMs', async () => {
    google.failNext({ status: 429, retryAfterSeconds: 7, pathIncludes: '/calendarList' });
    await assert.rejects(session.listCalendars(), (error: unknown) => error instanceof ProviderError && error.status === 429 && error.retryAfterMs === 7_000);
    const calendar = newCalendar();
    google.failNext({ status: 503, retryAfterSeconds: 2, pathIncludes: '/events' });
    await assert.rejects(session.syncCalendar(calendar, null, WINDOW), (error: unknown) => error instanceof ProviderError && error.status === 503 && error.retryAfterMs === 2_000);
    google.failNext({ status: 500, pathIncludes: '/events' });
    await assert.rejects(session.putEvent(calendar, null, write(randomUUID())), (error: unknown) => error instanceof ProviderError && error.status === 500 && error.retryAfterMs === null);
    assert.equal(google.events(calendar).length, 0);
  });

  test('Retry-After as an HTTP-date', () => {
    const now = Date.parse('2024-03-01T12:00:00Z');
    assert.equal(parseRetryAfter('Fri, 01 Mar 2024 12:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Fri, 01 Mar 2024 11:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(null, now), null);
  });

  test('a provider that hangs is a ProviderError without status once the deadline passes', async () => {
    const impatient = makeProvider({ timeoutMs: 200 }).session(tokens.accessToken);
    google.hangNext({ ms: 60_000, pathIncludes: '/calendarList' });
    await assert.rejects(impatient.listCalendars(), (error: unknown) => error instanceof ProviderError && error.status === null);
    google.hangNext({ ms: 60_000, pathIncludes: '/token' });
    await assert.rejects(makeProvider({ timeoutMs: 200 }).refresh(tokens.refreshToken ?? ''), (error: unknown) => error instanceof ProviderError && error.status === null);
  });

  test('an address the outbound rules refuse is a ProviderError without status', async () => {
    const strict = makeProvider({ allowLoopbackHttp: false });
    await assert.rejects(strict.session(tokens.accessToken).listCalendars(), (error: unknown) => error instanceof ProviderError && error.status === null);
    await assert.rejects(strict.refresh(tokens.refreshToken ?? ''), (error: unknown) => error instanceof ProviderError && error.status === null);
  });
});

function write(appointmentId: string, start = '2024-03-20T09:00:00Z', end = '2024-03-20T10:00:00Z') {
  return { appointmentId, title: 'Check-up with Cara Jones', description: 'Booked through Slotwise', start: new Date(start), end: new Date(end), timeZone: BERLIN };
}

describe('write-back', () => {
  test('putEvent with no event id twice (a retry after a crash) makes one event, tagged with the appointment', async () => {
    const calendar = newCalendar();
    const appointmentId = randomUUID();
    const first = await session.putEvent(calendar, null, write(appointmentId));
    assert.equal(first, googleEventId(appointmentId));
    assert.equal(first, `slot${appointmentId.replace(/-/g, '')}`);
    const second = await session.putEvent(calendar, null, write(appointmentId, '2024-03-20T11:00:00Z', '2024-03-20T12:00:00Z'));
    assert.equal(second, first);
    const events = google.events(calendar);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event?.summary, 'Check-up with Cara Jones');
    assert.equal(event?.description, 'Booked through Slotwise');
    assert.deepEqual(event?.start, { dateTime: '2024-03-20T12:00:00+01:00', timeZone: BERLIN });
    assert.deepEqual(event?.end, { dateTime: '2024-03-20T13:00:00+01:00', timeZone: BERLIN });
    assert.equal(event?.extendedProperties?.private?.[GOOGLE_APPOINTMENT_PROPERTY], appointmentId);
    // Read back as busy time carrying its marker: the core, not the provider, tells its own
    // appointments from another company's.
    const sync = await session.syncCalendar(calendar, null, WINDOW);
    assert.deepEqual(sync.events, [
      { key: first, start: new Date('2024-03-20T11:00:00Z'), end: new Date('2024-03-20T12:00:00Z'), transparency: 'opaque', eventType: 'default', marker: appointmentId },
    ]);
    assert.deepEqual(sync.removed, []);
  });

  test('putEvent with its event id moves it; deleteEvent removes it; deleting again succeeds', async () => {
    const calendar = newCalendar();
    const appointmentId = randomUUID();
    const id = await session.putEvent(calendar, null, write(appointmentId));
    assert.equal(await session.putEvent(calendar, id, { ...write(appointmentId, '2024-04-02T07:00:00Z', '2024-04-02T07:45:00Z'), title: 'Moved' }), id);
    const [moved] = google.events(calendar);
    assert.equal(moved?.summary, 'Moved');
    assert.deepEqual(moved?.start, { dateTime: '2024-04-02T09:00:00+02:00', timeZone: BERLIN });
    assert.equal(google.requests.filter((r) => r.method === 'PATCH').at(-1)?.path.endsWith(`/events/${id}`), true);

    await session.deleteEvent(calendar, id);
    assert.deepEqual(google.events(calendar).map((e) => e.status), ['cancelled']);
    await session.deleteEvent(calendar, id); // 410 at Google
    await session.deleteEvent(calendar, 'neverexisted0'); // 404
  });

  test('an event the user deleted, or one Google forgot, comes back on the next put', async () => {
    const calendar = newCalendar();
    const appointmentId = randomUUID();
    const id = await session.putEvent(calendar, null, write(appointmentId));
    google.deleteEvent(calendar, id);
    assert.equal(await session.putEvent(calendar, id, write(appointmentId)), id);
    assert.deepEqual(google.events(calendar).map((e) => e.status), ['confirmed']);

    const other = randomUUID();
    assert.equal(await session.putEvent(calendar, 'forgotten00', write(other)), googleEventId(other));
    assert.equal(google.events(calendar).length, 2);
  });

  test('a calendar we may only read refuses writes with a ProviderError', async () => {
    const calendar = newCalendar({ accessRole: 'reader' });
    await assert.rejects(session.putEvent(calendar, null, write(randomUUID())), (error: unknown) => error instanceof ProviderError && error.status === 403);
  });

  test('ids that are not UUIDs still become valid Google ids', () => {
    assert.match(googleEventId('legacy:42'), /^slot[0-9a-f]{64}$/);
    assert.equal(googleEventId('legacy:42'), googleEventId('legacy:42'));
  });
});
